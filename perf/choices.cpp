#include "choices.h"

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

// One size of one collective: the tuner's time and each forced algorithm's, medians in microseconds.
struct Case {
  const FlatAlgorithms* collective;
  size_t size;          // buffer bytes, as the sweep prints
  size_t bytesPerRank;  // what the tuner decides on (the count passed times the element size)
  double tunerUs;
  std::vector<double> forcedUs;
  long long wrong;  // elements wrong over every communicator and rank
};

size_t bestOf(const Case& c) {
  return static_cast<size_t>(std::min_element(c.forcedUs.begin(), c.forcedUs.end()) - c.forcedUs.begin());
}

void printCase(const Case& c) {
  const size_t best = bestOf(c);
  std::printf("  %-14s %10zu %10.1f", c.collective->collective, c.size, c.tunerUs);
  for (double us : c.forcedUs) std::printf(" %10.1f", us);
  std::printf("   %-19s %5.2f%s\n", c.collective->algorithms[best].c_str(), c.tunerUs / c.forcedUs[best],
              c.wrong != 0 ? "  WRONG" : "");
}

// A JSON string of an environment value (plugin lists and paths: no quotes or backslashes in them), or null.
std::string quotedOrNull(const char* value) {
  if (value == nullptr) return "null";
  std::string quoted = "\"";  // appended, not added: GCC 12 warns (-Wrestrict) on a + b + c
  quoted += value;
  quoted += '"';
  return quoted;
}

bool writeJson(const std::string& path, int nranks, const std::vector<Case>& cases) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "{\n \"nranks\": %d,\n \"plugins\": %s,\n \"tuning_file\": %s,\n \"cases\": [\n", nranks,
               quotedOrNull(std::getenv("WEFT_PLUGINS")).c_str(),
               quotedOrNull(std::getenv("WEFT_TUNING_FILE")).c_str());
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const size_t best = bestOf(c);
    std::fprintf(f, "  {\"collective\": \"%s\", \"size\": %zu, \"bytes_per_rank\": %zu, \"tuner_us\": %.3f, ",
                 c.collective->collective, c.size, c.bytesPerRank, c.tunerUs);
    std::fprintf(f, "\"forced_us\": {");
    for (size_t a = 0; a < c.forcedUs.size(); ++a)
      std::fprintf(f, "%s\"%s\": %.3f", a > 0 ? ", " : "", c.collective->algorithms[a].c_str(), c.forcedUs[a]);
    std::fprintf(f, "}, \"best\": \"%s\", \"tuner_over_best\": %.4f, \"wrong\": %lld}%s\n",
                 c.collective->algorithms[best].c_str(), c.tunerUs / c.forcedUs[best], c.wrong,
                 i + 1 < cases.size() ? "," : "");
  }
  std::fprintf(f, " ]\n}\n");
  return std::fclose(f) == 0;
}

}  // namespace

bool checkChoices(weftComm_t world, int rank, int nranks, const Options& options) {
  const std::vector<size_t> sizes = sweepSizes(options);
  const size_t capacity = *std::max_element(sizes.begin(), sizes.end());
  std::vector<Case> cases;
  Peers none;
  Bench bench(world, rank, nranks, options, capacity, none);
  for (const FlatAlgorithms& collective : flatAlgorithms()) {
    if (collective.algorithms.size() < 2) continue;
    const CollDesc& desc = *findColl(collective.collective);
    const std::vector<weftComm_t> comms = splitPerAlgorithm(world, rank, collective, true);
    if (rank == 0) {
      std::printf("# choices, %s on %d ranks: median us per call (float sum, out of place)\n#  %-14s %10s %10s",
                  collective.collective, nranks, "collective", "size", "tuner");
      for (const std::string& algorithm : collective.algorithms) std::printf(" %10.10s", algorithm.c_str());
      std::printf("   %-19s %5s\n", "best", "tuner/best");
    }
    for (size_t size : sizes) {
      const CollCounts counts = desc.counts(size / sizeof(float), rank, nranks);
      if (counts.paramCount == 0) continue;
      const std::vector<Measure> measures = bench.runOnComms(desc, size, weftFloat32, weftSum, comms);
      Case c{&collective, size, counts.paramCount * sizeof(float), measures[0].timeUs, {}, 0};
      for (size_t m = 0; m < measures.size(); ++m) {
        if (m > 0) c.forcedUs.push_back(measures[m].timeUs);
        c.wrong += std::max(0LL, measures[m].wrong);
      }
      if (rank == 0) printCase(c);
      cases.push_back(std::move(c));
    }
    destroyComms(comms, rank);
  }
  int ok = 1;
  if (rank == 0) {
    ok = writeJson(options.choicesPath, nranks, cases) ? 1 : 0;
    if (ok == 0) std::perror(("commperf: cannot write " + options.choicesPath).c_str());
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const bool anyWrong = std::any_of(cases.begin(), cases.end(), [](const Case& c) { return c.wrong != 0; });
  return ok == 1 && !anyWrong;
}

}  // namespace commperf
