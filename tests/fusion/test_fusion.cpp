// test_fusion: multi-rank test of the fusion of grouped collectives, launched with mpirun. Every case
// checks how many collectives weftCommGetStats says ran and every output against the sequential
// reference. MPI only distributes the weftUniqueId and combines pass/fail.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only
#endif
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fusion_test.h"

namespace {

using namespace fusiontest;

struct Case {
  int number;
  const char* name;
  void (*run)(Context&);
};

// Auto-many first, so that its first group sees the communicator's untouched default setting.
constexpr Case kCases[] = {
    {4, "auto-1000", caseAutoMany},
    {1, "index", caseIndex},
    {2, "size", caseSize},
    {3, "fusion-ids", caseFusionIds},
    {5, "off", caseOff},
    {6, "gather-scatter", caseGatherScatter},
    {7, "mixed-keys", caseMixedKeys},
    {7, "groups-and-comms", caseGroupsAndComms},
    {8, "dependent", caseDependent},
    {9, "bad-input", caseBadInput},
    {11, "early", caseEarly},
};

std::string gEnv;  // --env

void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [options]\n"
               "  --case N        run case N only (1-9, 11; default all)\n"
               "  --env NAME      case 10 only: expect the settings of the CTest entry's WEFT_FUSION\n"
               "                  (size1mb: \"allreduce:size:1;allgather:off\"; index: \"allreduce:index;\n"
               "                  reducescatter:off\" with WEFT_FUSION_INDEX=20,35; bad: a WEFT_FUSION that\n"
               "                  communicator creation rejects)\n"
               "  --memory M      heap (default); weft: every buffer from weftMemAlloc; mixed: on even ranks\n"
               "                  weftMemAlloc for even operations (every one when contiguous), heap elsewhere\n"
               "  --timeout S     abort with the operation in progress after S seconds (0: never; 280)\n"
               "  --max-errors N  failures printed per rank (30)\n",
               argv0);
}

// Runs one case, prints its one-line summary on rank 0, returns the failures over all ranks.
uint64_t runCase(Context& ctx, const std::string& name, void (*run)(Context&)) {
  const double start = colltest::nowSeconds();
  ctx.caseName = name;
  ctx.report = Report{};
  run(ctx);
  const uint64_t failures = colltest::sumOverRanks(ctx.report.failures);
  const uint64_t calls = colltest::sumOverRanks(ctx.report.calls);
  const uint64_t elements = colltest::sumOverRanks(ctx.report.elements);
  if (colltest::harness().worldRank == 0) {
    std::printf(
        "case %-28s np=%d: %llu calls checked, %llu elements compared (all ranks), %llu failures, %.1f s\n",
        name.c_str(), colltest::harness().worldSize, static_cast<unsigned long long>(calls),
        static_cast<unsigned long long>(elements), static_cast<unsigned long long>(failures),
        colltest::nowSeconds() - start);
    std::fflush(stdout);
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  colltest::Harness& h = colltest::harness();
  MPI_Comm_rank(MPI_COMM_WORLD, &h.worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &h.worldSize);
  h.options.timeoutSeconds = 280;
  int only = 0;
  Memory memory = Memory::kHeap;
  std::string& env = gEnv;
  bool ok = true;
  for (int i = 1; i < argc && ok; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    ok = value != nullptr;
    if (!ok) break;
    ++i;
    if (arg == "--case") {
      only = std::atoi(value);
    } else if (arg == "--env") {
      env = value;
    } else if (arg == "--memory") {
      const std::string m = value;
      ok = m == "heap" || m == "weft" || m == "mixed";
      memory = m == "weft" ? Memory::kWeft : m == "mixed" ? Memory::kMixed : Memory::kHeap;
    } else if (arg == "--timeout") {
      h.options.timeoutSeconds = std::atoi(value);
    } else if (arg == "--max-errors") {
      h.options.maxErrorsPrinted = std::atoi(value);
    } else {
      ok = false;
    }
  }
  if (!ok) {
    if (h.worldRank == 0) usage(argv[0]);
    MPI_Finalize();
    return 2;
  }
  colltest::installWatchdog(h.options.timeoutSeconds);
  if (env.empty()) {  // the default setting is under test: no environment's
    unsetenv("WEFT_FUSION");
    unsetenv("WEFT_FUSION_INDEX");
  }

  const double start = colltest::nowSeconds();
  if (env == "bad") return colltest::finishProgram("test_fusion", colltest::sumOverRanks(caseBadEnv()), start);
  Context ctx;
  ctx.memory = memory;
  ctx.view = colltest::createWorldComm(nullptr);
  colltest::expectOk(weftStreamCreate(&ctx.stream), "weftStreamCreate");
  uint64_t failures = 0;
  if (!env.empty()) {
    failures += runCase(ctx, "10 env " + env, [](Context& c) { caseEnv(c, gEnv); });
  } else {
    for (const Case& c : kCases) {
      if (only == 0 || only == c.number) failures += runCase(ctx, std::to_string(c.number) + " " + c.name, c.run);
    }
  }
  colltest::expectOk(weftStreamDestroy(ctx.stream), "weftStreamDestroy");
  colltest::destroyComm(ctx.view);

  return colltest::finishProgram("test_fusion", failures, start);
}
