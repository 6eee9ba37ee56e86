// test_plans: multi-rank test of plans (weftPlanBegin/End/Launch/GetInfo/Destroy), launched with mpirun.
// Recorded calls run nothing; every launch runs them in order on the buffers' current contents, checked
// against the sequential reference and bit for bit against the same calls issued eagerly; the plan's
// classification and reuse under the environment's settings; bad usage and the life cycle. MPI only
// distributes the weftUniqueId and combines pass/fail.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only
#endif
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "plans_test.h"

namespace {

using namespace plantest;

struct Case {
  int number;
  const char* name;
  void (*run)(Context&);
};

constexpr Case kCases[] = {
    {1, "recording", caseRecording}, {2, "mixed", caseMixed},         {3, "split", caseSplit},
    {4, "fusion", caseFusion},       {5, "reuse", caseReuse},         {6, "reuse-env", caseReuseEnv},
    {7, "bad-usage", caseBadUsage},  {8, "lifecycle", caseLifecycle}, {9, "launch-allocs", caseLaunchAllocations},
    {10, "streams", caseStreams},
};

const char* const kPlanEnv[] = {"WEFT_STREAM_CAPACITY", "WEFT_MAX_STREAMS", "WEFT_SUBGRAPH_REUSE",
                                "WEFT_PLAN_THREADS"};

std::string gEnvCase;  // --env-case

void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [options]\n"
               "  --case N          run case N only (1-10; default all)\n"
               "  --env-case NAME   only the settings the CTest entry put in the environment (no setenv):\n"
               "                    reuse40 (WEFT_SUBGRAPH_REUSE=40), off4 (WEFT_SUBGRAPH_REUSE=0 and\n"
               "                    WEFT_MAX_STREAMS=4), bad (a WEFT_SUBGRAPH_REUSE weftPlanEnd rejects)\n"
               "  --hosts SPEC      emulate hosts through WEFT_HOST_ID: blocks:N (N consecutive ranks per\n"
               "                    host) or alternate:N (ranks dealt round N hosts)\n"
               "  --timeout S       abort with the operation in progress after S seconds (0: never; 280)\n"
               "  --max-errors N    failures printed per rank (30)\n",
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
    std::printf("case %-14s np=%d: %s, %llu checks, %llu elements compared (all ranks), %llu failures, %.1f s\n",
                name.c_str(), colltest::harness().worldSize, failures ? "FAILED" : "passed",
                static_cast<unsigned long long>(calls), static_cast<unsigned long long>(elements),
                static_cast<unsigned long long>(failures), colltest::nowSeconds() - start);
    std::fflush(stdout);
  }
  return failures;
}

// world split by parity at 4 ranks or more, else all ranks together; keys reversed either way.
colltest::CommView splitWorld(const colltest::CommView& world) {
  const int np = world.size, me = world.rank;
  const int color = np >= 4 ? me % 2 : 0;
  colltest::CommView sub;
  sub.name = "sub(color=" + std::to_string(color) + ",key=-rank)";
  colltest::expectOk(weftCommSplit(world.comm, color, -me, &sub.comm), "weftCommSplit");
  if (!sub.comm) colltest::fatal("weftCommSplit returned a NULL communicator");
  for (int r = np - 1; r >= 0; --r) {
    if ((np >= 4 ? r % 2 : 0) == color) sub.ids.push_back(r);
  }
  sub.size = static_cast<int>(sub.ids.size());
  sub.rank = static_cast<int>(std::find(sub.ids.begin(), sub.ids.end(), me) - sub.ids.begin());
  return sub;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  colltest::Harness& h = colltest::harness();
  MPI_Comm_rank(MPI_COMM_WORLD, &h.worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &h.worldSize);
  h.options.timeoutSeconds = 280;
  int only = 0;
  std::string hosts;
  bool ok = true;
  for (int i = 1; i < argc && ok; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    ok = value != nullptr;
    if (!ok) break;
    ++i;
    if (arg == "--case") {
      only = std::atoi(value);
    } else if (arg == "--env-case") {
      gEnvCase = value;
    } else if (arg == "--hosts") {
      hosts = value;
      ok = colltest::validHostsSpec(hosts);
    } else if (arg == "--timeout") {
      h.options.timeoutSeconds = std::atoi(value);
    } else if (arg == "--max-errors") {
      h.options.maxErrorsPrinted = std::atoi(value);
    } else {
      ok = false;
    }
  }
  if (!ok || h.worldSize < 2) {
    if (h.worldRank == 0) usage(argv[0]);
    if (h.worldRank == 0 && ok) std::fprintf(stderr, "test_plans needs 2 ranks or more\n");
    MPI_Finalize();
    return 2;
  }
  colltest::installWatchdog(h.options.timeoutSeconds);
  if (!hosts.empty()) colltest::emulateHosts(hosts, h.worldRank);
  if (gEnvCase.empty()) {  // the defaults are under test, and the cases set what they need themselves
    for (const char* name : kPlanEnv) unsetenv(name);
  }

  const double start = colltest::nowSeconds();
  Context ctx;
  ctx.world = colltest::createWorldComm(nullptr);
  ctx.sub = splitWorld(ctx.world);
  colltest::expectOk(weftStreamCreate(&ctx.stream), "weftStreamCreate");
  uint64_t failures = 0;
  if (!gEnvCase.empty()) {
    failures += runCase(ctx, "env " + gEnvCase, [](Context& c) { caseEnvExternal(c, gEnvCase); });
  } else {
    for (const Case& c : kCases) {
      if (only == 0 || only == c.number) failures += runCase(ctx, std::to_string(c.number) + " " + c.name, c.run);
    }
  }
  colltest::expectOk(weftStreamDestroy(ctx.stream), "weftStreamDestroy");
  colltest::destroyComm(ctx.sub);
  colltest::destroyComm(ctx.world);

  return colltest::finishProgram("test_plans", failures, start);
}
