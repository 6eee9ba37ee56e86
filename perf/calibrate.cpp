#include "calibrate.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench.h"
#include "colls.h"
#include "forced_comm.h"

namespace commperf {
namespace {

// Per-rank contribution sizes measured: latency-bound to bandwidth-bound. 16 MiB measures the slope the model
// carries to larger sizes: between 2 and 4 MiB two algorithms' slopes differed by less than the noise at 2
// ranks over tcp, and whichever came out lower was chosen up to 64 MiB, wrongly half the time.
constexpr size_t kCalibrationSizes[] = {8,         1 << 10,   8 << 10, 32 << 10, 64 << 10, 128 << 10,
                                        256 << 10, 512 << 10, 1 << 20, 2 << 20,  4 << 20,  16 << 20};
// Above this many bytes per rank, -n is scaled down in proportion (at least one call per round), so that the
// largest sizes take about as long as 4 MiB does.
constexpr size_t kFullIterationsUpTo = 4 << 20;

int iterationsFor(size_t bytesPerRank, const Options& options) {
  if (bytesPerRank <= kFullIterationsUpTo) return options.iters;
  const size_t scaled = static_cast<size_t>(options.iters) * kFullIterationsUpTo / bytesPerRank;
  return std::max(options.rounds, static_cast<int>(scaled));
}

// "a, b, c" of numbers, for the file and the table.
std::string joined(const std::vector<double>& values, const char* format) {
  std::string text;
  for (double v : values) {
    char number[32];
    std::snprintf(number, sizeof number, format, v);
    if (!text.empty()) text += ", ";
    text += number;
  }
  return text;
}

// The calibration sizes as the table's header names them: 8, 1K, ..., 16M.
std::string sizeNames() {
  std::string text;
  for (size_t bytes : kCalibrationSizes) {
    if (!text.empty()) text += ", ";
    text += bytes >= (1 << 20)   ? std::to_string(bytes >> 20) + "M"
            : bytes >= (1 << 10) ? std::to_string(bytes >> 10) + "K"
                                 : std::to_string(bytes);
  }
  return text;
}

std::string transportName(const Options& options) {
  if (!options.calibrateTransport.empty()) return options.calibrateTransport;
  const char* plugins = std::getenv("WEFT_PLUGINS");
  std::string named = plugins != nullptr ? plugins : "";
  if (!named.empty() && named.find_first_of(",^") == std::string::npos) return named;
  return "shm";
}

}  // namespace

bool calibrate(weftComm_t world, int rank, int nranks, const Options& options) {
  const std::string transport = transportName(options);
  std::vector<std::string> entries;
  if (rank == 0) {
    std::printf("# calibration: %d ranks, transport %s; median us per call at n = %s bytes per rank\n", nranks,
                transport.c_str(), sizeNames().c_str());
  }
  for (const FlatAlgorithms& collective : flatAlgorithms()) {
    const std::vector<weftComm_t> comms = splitPerAlgorithm(world, rank, collective, false);
    const CollDesc& desc = *findColl(collective.collective);
    std::vector<double> n;
    std::vector<std::vector<double>> us(comms.size());  // per algorithm, per size
    {
      size_t capacity = 0;
      for (size_t bytes : kCalibrationSizes)
        capacity = std::max(capacity, bytes * (desc.algScalesWithRanks ? nranks : 1));
      Peers none;
      Options timing = options;  // the Bench keeps a reference: iters is set per size below
      timing.check = false;
      Bench bench(world, rank, nranks, timing, capacity, none);
      for (size_t bytes : kCalibrationSizes) {
        timing.iters = iterationsFor(bytes, options);
        const size_t size = desc.algScalesWithRanks ? bytes * static_cast<size_t>(nranks) : bytes;
        const std::vector<Measure> measures = bench.runOnComms(
            desc, size, weftFloat32, desc.hasOp ? std::optional<weftRedOp_t>(weftSum) : std::nullopt, comms);
        n.push_back(static_cast<double>(bytes));
        for (size_t a = 0; a < comms.size(); ++a) us[a].push_back(measures[a].timeUs);
      }
    }
    destroyComms(comms, rank);
    if (rank != 0) continue;
    for (size_t a = 0; a < comms.size(); ++a) {
      const std::string times = joined(us[a], "%.2f");
      const std::string& algorithm = collective.algorithms[a];
      std::printf("  %-14s %-19s %s\n", collective.collective, algorithm.c_str(), times.c_str());
      std::string entry = "    {\"transport\": \"" + transport + "\", \"collective\": \"";
      entry += collective.collective;
      entry += "\", \"algorithm\": \"";
      entry += algorithm;
      entry += "\", \"nranks\": ";
      entry += std::to_string(nranks);
      entry += ",\n     \"bytes\": [";
      entry += joined(n, "%.0f");
      entry += "],\n     \"times_us\": [";
      entry += times;
      entry += "]}";
      entries.emplace_back(entry);
    }
  }
  int ok = 1;
  if (rank == 0) {
    std::FILE* f = std::fopen(options.calibratePath.c_str(), "w");
    if (f != nullptr) {
      std::fprintf(
          f, "{\n  \"weft_tuning_version\": 1,\n  \"nranks\": %d,\n  \"transport\": \"%s\",\n  \"entries\": [\n",
          nranks, transport.c_str());
      for (size_t i = 0; i < entries.size(); ++i)
        std::fprintf(f, "%s%s\n", entries[i].c_str(), i + 1 < entries.size() ? "," : "");
      std::fprintf(f, "  ]\n}\n");
      ok = std::fclose(f) == 0 ? 1 : 0;
    } else {
      ok = 0;
    }
    if (ok == 0)
      std::perror(("commperf: cannot write " + options.calibratePath).c_str());
    else
      std::printf("# wrote %s (load it with WEFT_TUNING_FILE=%s)\n", options.calibratePath.c_str(),
                  options.calibratePath.c_str());
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok == 1;
}

}  // namespace commperf
