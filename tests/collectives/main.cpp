// test_collectives: multi-rank correctness test of Weft, launched with mpirun. MPI only distributes the
// weftUniqueId and combines pass/fail; everything under test goes through Weft.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only
#endif
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "buffers.h"
#include "common.h"
#include "harness.h"
#include "sections.h"

namespace {

using namespace colltest;

void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [options]\n"
               "  --section S        collectives | split | stream | sendrecv | all (default all)\n"
               "  --max-count N      only counts <= N\n"
               "  --counts A,B,...   the counts to sweep (default 0,1,7,1000,1048579, or COLLTEST_COUNTS)\n"
               "  --full             every combination at counts > %zu too (slow)\n"
               "  --algo STR         one WEFT_ALGO setting only, e.g. \"allreduce:ring\" ('default' = unset)\n"
               "  --coll NAME        one collective only (AllReduce, Broadcast, Reduce, AllGather,\n"
               "                     ReduceScatter, AllToAll, Barrier)\n"
               "  --type NAME        one type only (int8 ... float64)\n"
               "  --op NAME          one op only (sum, prod, max, min, avg)\n"
               "  --timeout S        abort with the operation in progress after S seconds (0: never; 540)\n"
               "  --max-errors N     failures printed per rank (30)\n"
               "  --memory M         heap (default), weft: every buffer from weftMemAlloc, or mixed:\n"
               "                     weftMemAlloc on even ranks, heap on odd ones\n"
               "  --misalign B       every buffer's data starts B bytes past an aligned address (0)\n"
               "  --verbose          timings per collective and setting\n"
               "  --hosts SPEC       emulate hosts through WEFT_HOST_ID: blocks:N (N consecutive ranks per\n"
               "                     host) or alternate:N (rank r on host r %% N)\n",
               argv0, kFullSweepMaxCount);
}

bool parseSizeList(const char* text, std::vector<size_t>* out) {
  out->clear();
  const char* p = text;
  while (*p) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(p, &end, 10);
    if (end == p) return false;
    out->push_back(static_cast<size_t>(v));
    p = end;
    if (*p == ',')
      ++p;
    else if (*p)
      return false;
  }
  return !out->empty();
}

bool parseOptions(int argc, char** argv, Options* opt) {
  size_t maxCount = static_cast<size_t>(-1);
  // COLLTEST_COUNTS replaces the default counts where the command line cannot change: the sanitized run
  // (tests/sanitizers/run_sanitized.sh) keeps the suite's entries but sweeps smaller large counts, since
  // checking a million elements per call under ASan costs more than the collective itself.
  if (const char* counts = std::getenv("COLLTEST_COUNTS"); counts != nullptr && *counts != '\0') {
    if (!parseSizeList(counts, &opt->counts)) return false;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--full") {
      opt->full = true;
    } else if (arg == "--verbose") {
      opt->verbose = true;
    } else if (arg == "--help" || arg == "-h") {
      return false;
    } else {
      const char* v = value();
      if (!v) return false;
      if (arg == "--section") {
        opt->section = v;
        if (opt->section != "all" && opt->section != "collectives" && opt->section != "split" &&
            opt->section != "stream" && opt->section != "sendrecv") {
          return false;
        }
      } else if (arg == "--max-count") {
        maxCount = std::strtoull(v, nullptr, 10);
      } else if (arg == "--counts") {
        if (!parseSizeList(v, &opt->counts)) return false;
      } else if (arg == "--algo") {
        opt->algoGiven = true;
        opt->algo = v;
      } else if (arg == "--coll") {
        Coll c;
        if (!parseColl(v, &c)) return false;
        opt->collMask = collBit(c);
      } else if (arg == "--type") {
        weftDataType_t t;
        if (!parseType(v, &t)) return false;
        opt->typeFilter = t;
      } else if (arg == "--op") {
        weftRedOp_t o;
        if (!parseOp(v, &o)) return false;
        opt->opFilter = o;
      } else if (arg == "--timeout") {
        opt->timeoutSeconds = std::atoi(v);
      } else if (arg == "--hosts") {
        opt->hosts = v;
        if (!validHostsSpec(opt->hosts)) return false;
      } else if (arg == "--max-errors") {
        opt->maxErrorsPrinted = std::atoi(v);
      } else if (arg == "--misalign") {
        GuardedBuffer::misalignBy(std::strtoull(v, nullptr, 10));
      } else if (arg == "--memory") {
        const bool weft = std::strcmp(v, "weft") == 0;
        const bool mixed = std::strcmp(v, "mixed") == 0;
        if (!weft && !mixed && std::strcmp(v, "heap") != 0) return false;
        GuardedBuffer::useWeftMemory(weft || (mixed && harness().worldRank % 2 == 0));
      } else {
        return false;
      }
    }
  }
  std::erase_if(opt->counts, [&](size_t c) { return c > maxCount; });
  return true;
}

// Runs one section, prints its one-line summary on rank 0, returns the failures over all ranks.
uint64_t runSection(const char* name, Report (*section)()) {
  const double start = nowSeconds();
  setCurrentOp(std::string("section ") + name);
  const Report report = section();
  const uint64_t failures = sumOverRanks(report.failures);
  const uint64_t calls = sumOverRanks(report.calls);
  const uint64_t elements = sumOverRanks(report.elements);
  if (harness().worldRank == 0) {
    std::printf(
        "%-12s np=%d: %llu operations checked, %llu elements compared (all ranks), %llu failures, %.1f s\n", name,
        harness().worldSize, static_cast<unsigned long long>(calls), static_cast<unsigned long long>(elements),
        static_cast<unsigned long long>(failures), nowSeconds() - start);
    std::fflush(stdout);
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Harness& h = harness();
  MPI_Comm_rank(MPI_COMM_WORLD, &h.worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &h.worldSize);
  if (!parseOptions(argc, argv, &h.options)) {
    if (h.worldRank == 0) usage(argv[0]);
    MPI_Finalize();
    return 2;
  }
  installWatchdog(h.options.timeoutSeconds);
  if (!h.options.hosts.empty()) emulateHosts(h.options.hosts, h.worldRank);

  uint64_t failures = 0;
  int version = 0;
  expectOk(weftGetVersion(&version), "weftGetVersion");
  if (version != WEFT_VERSION_CODE) {
    std::fprintf(stderr, "[rank %d] FAIL weftGetVersion gives %d, weft.h says %d\n", h.worldRank, version,
                 WEFT_VERSION_CODE);
    ++failures;
  }
  failures = sumOverRanks(failures);

  const double start = nowSeconds();
  const std::string& s = h.options.section;
  if (s == "all" || s == "collectives") failures += runSection("collectives", runCollectivesSection);
  if (s == "all" || s == "split") failures += runSection("split", runSplitSection);
  if (s == "all" || s == "stream") failures += runSection("stream", runStreamSection);
  if (s == "all" || s == "sendrecv") failures += runSection("sendrecv", runSendRecvSection);

  if (h.worldRank == 0) {
    std::printf("test_collectives np=%d: %s (%llu failures, %.1f s)\n", h.worldSize,
                failures ? "FAILED" : "PASSED", static_cast<unsigned long long>(failures), nowSeconds() - start);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return failures ? 1 : 0;
}
