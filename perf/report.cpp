#include "report.h"

#include <string>

#include "types.h"

namespace commperf {

namespace {

std::string timeString(double us) {
  char text[32];
  // nccl-tests: more decimals for short times.
  if (us < 100.0)
    std::snprintf(text, sizeof text, "%7.2f", us);
  else if (us < 10000.0)
    std::snprintf(text, sizeof text, "%7.1f", us);
  else
    std::snprintf(text, sizeof text, "%7.0f", us);
  return text;
}

void printMeasure(std::FILE* out, const Measure& m) {
  if (!m.ran) {
    std::fprintf(out, "  %7s  %6s  %6s  %5s", "N/A", "N/A", "N/A", "N/A");
    return;
  }
  std::string wrong = m.wrong < 0 ? "N/A" : std::to_string(m.wrong);
  std::fprintf(out, "  %7s  %6.2f  %6.2f  %5s", timeString(m.timeUs).c_str(), m.algBw, m.busBw, wrong.c_str());
}

std::string jsonString(const std::string& text) {
  std::string s = "\"";
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (u < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", u);
      s += escape;
    } else {
      s += c;
    }
  }
  return s + "\"";
}

std::string jsonMeasure(const Measure& m) {
  if (!m.ran) return "null";
  char text[256];
  std::string wrong = m.wrong < 0 ? "null" : std::to_string(m.wrong);
  std::snprintf(text, sizeof text, "{\"time_us\": %.3f, \"algbw\": %.6g, \"busbw\": %.6g, \"wrong\": %s}",
                m.timeUs, m.algBw, m.busBw, wrong.c_str());
  return text;
}

}  // namespace

void printHeader(std::FILE* out, const Options& options, const RunInfo& info) {
  std::string step = options.stepFactor > 1 ? std::to_string(options.stepFactor) + "(factor)"
                                            : std::to_string(options.stepBytes) + "(bytes)";
  std::fprintf(out,
               "# nThread 1 minBytes %zu maxBytes %zu step: %s warmup iters: %d iters: %d validation: %d "
               "nranks %d\n",
               options.minBytes, options.maxBytes, step.c_str(), options.warmupIters, options.iters,
               options.check ? 1 : 0, info.nranks);
  std::fprintf(out, "# Weft version %d (%d.%d.%d)\n#\n# Using ranks\n", info.version, info.version / 10000,
               info.version / 100 % 100, info.version % 100);
  for (const std::string& line : info.rankLines) std::fprintf(out, "#  %s\n", line.c_str());
}

void printCollHeader(std::FILE* out, const char* collName) {
  std::fprintf(out, "#\n# Collective: %s\n#\n", collName);
  std::fprintf(out, "#%73s%32s\n", "out-of-place", "in-place          ");
  std::fprintf(out,
               "#       size         count      type   redop    root"
               "     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
  std::fprintf(out,
               "#        (B)    (elements)                            "
               "   (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
}

void printRow(std::FILE* out, const Row& row) {
  std::fprintf(out, "%12zu  %12zu  %8s  %6s  %6d", row.size, row.count, typeName(row.type),
               row.op ? opName(*row.op) : "none", row.root);
  printMeasure(out, row.outOfPlace);
  printMeasure(out, row.inPlace);
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printCollFooter(std::FILE* out, long long wrong, double avgBusBw) {
  std::fprintf(out, "# Out of bounds values : %lld %s\n", wrong, wrong == 0 ? "OK" : "FAILED");
  std::fprintf(out, "# Avg bus bandwidth    : %g \n#\n", avgBusBw);
  std::fflush(out);
}

bool JsonReport::write(const std::string& path, long long totalWrong) const {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "{\n  \"tool\": \"commperf\",\n  \"version\": %d,\n  \"ranks\": %d,\n", info_.version,
               info_.nranks);
  std::fprintf(f, "  \"command_line\": %s,\n", jsonString(options_.commandLine).c_str());
  std::fprintf(f,
               "  \"options\": {\"minbytes\": %zu, \"maxbytes\": %zu, \"stepfactor\": %zu, \"stepbytes\": %zu, "
               "\"iters\": %d, \"warmup_iters\": %d, \"check\": %d, \"root\": %d},\n",
               options_.minBytes, options_.maxBytes, options_.stepFactor, options_.stepBytes, options_.iters,
               options_.warmupIters, options_.check ? 1 : 0, options_.root);
  std::fprintf(f, "  \"results\": [");
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& row = rows_[i];
    std::fprintf(f,
                 "%s\n    {\"collective\": \"%s\", \"size\": %zu, \"count\": %zu, \"type\": \"%s\", "
                 "\"redop\": \"%s\", \"root\": %d,\n     \"out_of_place\": %s,\n     \"in_place\": %s}",
                 i ? "," : "", row.desc->name, row.size, row.count, typeName(row.type),
                 row.op ? opName(*row.op) : "none", row.root, jsonMeasure(row.outOfPlace).c_str(),
                 jsonMeasure(row.inPlace).c_str());
  }
  std::fprintf(f, "\n  ],\n  \"out_of_bounds\": %lld\n}\n", totalWrong);
  bool ok = !std::ferror(f);
  return std::fclose(f) == 0 && ok;
}

}  // namespace commperf
