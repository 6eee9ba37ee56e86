#include "calibrate.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench.h"
#include "colls.h"

namespace commperf {
namespace {

// Per-rank contribution sizes measured: latency-bound to bandwidth-bound.
constexpr size_t kCalibrationSizes[] = {8,         1 << 10, 8 << 10, 64 << 10, 256 << 10,
                                        512 << 10, 1 << 20, 2 << 20, 4 << 20};

struct Candidate {
  const char* collective;  // commperf's and WEFT_ALGO's name
  const char* algorithm;
};
// Every flat algorithm Weft has (WEFT_ALGO names; hierarchical ones are priced from these).
constexpr Candidate kCandidates[] = {
    {"allreduce", "ring"},     {"allreduce", "recursive_doubling"}, {"allreduce", "rabenseifner"},
    {"reducescatter", "ring"}, {"reducescatter", "rabenseifner"},   {"allgather", "ring"},
    {"allgather", "bruck"},    {"broadcast", "binomial_tree"},      {"reduce", "binomial_tree"},
    {"alltoall", "pairwise"},
};

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

std::string transportName(const Options& options) {
  if (!options.calibrateTransport.empty()) return options.calibrateTransport;
  const char* plugins = std::getenv("WEFT_PLUGINS");
  std::string named = plugins != nullptr ? plugins : "";
  if (!named.empty() && named.find_first_of(",^") == std::string::npos) return named;
  return "shm";
}

// A communicator that runs `candidate` for its collective: WEFT_ALGO is read when a communicator is made.
weftComm_t forcedComm(weftComm_t world, int rank, const Candidate& candidate) {
  const char* saved = std::getenv("WEFT_ALGO");
  const std::string previous = saved != nullptr ? saved : "";
  std::string algo = candidate.collective;  // appended, not added: GCC 12 -O3 warns (-Wrestrict) on a + b + c
  algo += ':';
  algo += candidate.algorithm;
  setenv("WEFT_ALGO", algo.c_str(), 1);
  weftComm_t comm = nullptr;
  weftCheck(weftCommSplit(world, 0, rank, &comm), "weftCommSplit (calibration)", rank);
  if (saved != nullptr) {
    setenv("WEFT_ALGO", previous.c_str(), 1);
  } else {
    unsetenv("WEFT_ALGO");
  }
  return comm;
}

}  // namespace

bool calibrate(weftComm_t world, int rank, int nranks, const Options& options) {
  const std::string transport = transportName(options);
  std::vector<std::string> entries;
  if (rank == 0) {
    std::printf(
        "# calibration: %d ranks, transport %s; median us per call at n = 8, 1K, 8K, 64K, 256K, 512K, 1M, 2M, 4M "
        "bytes per rank\n",
        nranks, transport.c_str());
  }
  for (const Candidate& candidate : kCandidates) {
    weftComm_t comm = forcedComm(world, rank, candidate);
    const CollDesc& desc = *findColl(candidate.collective);
    std::vector<double> n, us;
    {
      size_t capacity = 0;
      for (size_t bytes : kCalibrationSizes)
        capacity = std::max(capacity, bytes * (desc.algScalesWithRanks ? nranks : 1));
      Peers none;
      Options unchecked = options;
      unchecked.check = false;
      Bench bench(comm, rank, nranks, unchecked, capacity, none);
      for (size_t bytes : kCalibrationSizes) {
        const size_t size = desc.algScalesWithRanks ? bytes * static_cast<size_t>(nranks) : bytes;
        Row row =
            bench.run(desc, size, weftFloat32, desc.hasOp ? std::optional<weftRedOp_t>(weftSum) : std::nullopt);
        n.push_back(
            static_cast<double>(desc.algScalesWithRanks ? row.size / static_cast<size_t>(nranks) : row.size));
        us.push_back(row.outOfPlace.minUs);  // the fastest round: noise on a shared machine only adds
      }
    }
    weftCheck(weftCommDestroy(comm), "weftCommDestroy (calibration)", rank);
    if (rank != 0) continue;
    const std::string times = joined(us, "%.2f");
    std::printf("  %-14s %-19s %s\n", candidate.collective, candidate.algorithm, times.c_str());
    std::string entry = "    {\"transport\": \"" + transport + "\", \"collective\": \"";
    entry += candidate.collective;
    entry += "\", \"algorithm\": \"";
    entry += candidate.algorithm;
    entry += "\", \"nranks\": " + std::to_string(nranks) + ",\n     \"bytes\": [" + joined(n, "%.0f") +
             "],\n     \"times_us\": [" + times + "]}";
    entries.emplace_back(entry);
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
