// weftInternalInfoMain(): weft-info's options and output.
#include "core/info/entry.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "core/info/info_report.h"
#include "core/info/model_projection.h"

namespace {

const char* const kUsage =
    "Usage: weft-info [--json] [--help]\n"
    "       weft-info --model COLLECTIVE:BYTES [--ranks-per-host N] [--max-ranks N] [--transports INTRA,INTER]\n"
    "Prints Weft's version, every plugin found (file, ABI version, kind, loaded or why not), this machine's\n"
    "topology as hwloc sees it, and every WEFT_* setting with its value and where it came from (default,\n"
    "environment, tuning file).\n"
    "  --json   the same as one JSON object on stdout\n"
    "  --model COLLECTIVE:BYTES  instead: the tuner's cost model projected from 2 to --max-ranks ranks\n"
    "           (default 1024), --ranks-per-host to a host (default 8): predicted microseconds per algorithm\n"
    "           and the tuner's choice (e.g. --model allreduce:1M; docs/scaling.md); --transports: inside\n"
    "           hosts and between them (default shm,tcp)\n"
    "  --help   this text\n"
    "Plugins are searched in <folder of libweft.so>/weft, then in WEFT_PLUGIN_PATH. Log lines go to stderr\n"
    "(WEFT_LOG_LEVEL=debug shows each load attempt).\n";

// "allreduce:1M" -> (collective, bytes); false when it is not one.
bool parseModelCase(const std::string& text, weft::Collective& c, size_t& bytes) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return false;
  const std::optional<weft::Collective> named = weft::collectiveNamed(text.substr(0, colon));
  if (!named) return false;
  c = *named;
  char* end = nullptr;
  const std::string size = text.substr(colon + 1);
  const unsigned long long value = std::strtoull(size.c_str(), &end, 10);
  int shift = 0;
  if (*end == 'K') shift = 10;
  if (*end == 'M') shift = 20;
  if (*end == 'G') shift = 30;
  if (shift != 0) ++end;
  if (size.empty() || *end != '\0' || value > (1ULL << 40)) return false;
  bytes = static_cast<size_t>(value << shift);
  return true;
}

}  // namespace

extern "C" WEFT_API int weftInternalInfoMain(int argc, char** argv) {
  bool json = false;
  std::string model;
  int ranksPerHost = 8;
  int maxRanks = 1024;
  std::string transports = "shm,tcp";
  for (int i = 1; i < argc; ++i) {
    const bool hasValue = i + 1 < argc;
    if ((std::strcmp(argv[i], "--model") == 0 || std::strcmp(argv[i], "--ranks-per-host") == 0 ||
         std::strcmp(argv[i], "--max-ranks") == 0 || std::strcmp(argv[i], "--transports") == 0) &&
        !hasValue) {
      std::fprintf(stderr, "weft-info: %s needs a value\n%s", argv[i], kUsage);
      return 2;
    }
    if (std::strcmp(argv[i], "--model") == 0) {
      model = argv[++i];
    } else if (std::strcmp(argv[i], "--ranks-per-host") == 0) {
      ranksPerHost = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--max-ranks") == 0) {
      maxRanks = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--transports") == 0) {
      transports = argv[++i];
    } else if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "weft-info: unknown option '%s'\n%s", argv[i], kUsage);
      return 2;
    }
  }
  if (!model.empty()) {
    weft::Collective c{};
    size_t bytes = 0;
    const size_t comma = transports.find(',');
    if (!parseModelCase(model, c, bytes) || ranksPerHost < 1 || maxRanks < 2 || maxRanks > (1 << 20) ||
        comma == std::string::npos || comma == 0 || comma + 1 == transports.size()) {
      std::fprintf(stderr,
                   "weft-info: --model wants COLLECTIVE:BYTES (e.g. allreduce:1M), --ranks-per-host >= 1, "
                   "--max-ranks from 2 to 1048576, --transports INTRA,INTER\n");
      return 2;
    }
    const std::string intra = transports.substr(0, comma);
    const std::string inter = transports.substr(comma + 1);
    try {
      std::fputs(weft::info::modelProjection(c, bytes, ranksPerHost, maxRanks, intra, inter).c_str(), stdout);
      return std::fflush(stdout) == 0 ? 0 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "weft-info: %s\n", e.what());
      return 1;
    }
  }
  try {
    weft::info::InfoReport report = weft::info::gatherInfo();
    std::string text = json ? weft::info::jsonReport(report) : weft::info::textReport(report);
    std::fputs(text.c_str(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-info: %s\n", e.what());
    return 1;
  }
}
