#include "harness.h"

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only
#endif
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace colltest {

namespace {

uint64_t gSalt = 0;
uint64_t gPrinted = 0;
char gCurrentOp[512] = "startup";
char gWatchdogPrefix[128] = "";

void onAlarm(int) {
  // Only async-signal-safe calls here.
  ssize_t ignored = write(STDERR_FILENO, gWatchdogPrefix, std::strlen(gWatchdogPrefix));
  ignored = write(STDERR_FILENO, gCurrentOp, ::strnlen(gCurrentOp, sizeof gCurrentOp));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
  _exit(3);
}

}  // namespace

Harness& harness() {
  static Harness h;
  return h;
}

uint64_t nextSalt() { return ++gSalt; }

void resetSalt(uint64_t base) { gSalt = base; }

void fatal(const std::string& message) {
  std::fprintf(stderr, "[rank %d] FATAL: %s [algo=%s]\n", harness().worldRank, message.c_str(),
               harness().algo.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::abort();
}

void expectOk(weftResult_t result, const std::string& what) {
  if (result == weftSuccess) return;
  const char* message = weftGetLastErrorMessage();
  std::fprintf(stderr, "[rank %d] FATAL: %s returned %d (%s): %s [algo=%s]\n", harness().worldRank, what.c_str(),
               static_cast<int>(result), weftGetErrorString(result), message ? message : "(null)",
               harness().algo.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

CommView createWorldComm(const char* algo) {
  Harness& h = harness();
  if (algo) {
    setenv("WEFT_ALGO", algo, 1);
    h.algo = algo;
  } else {
    unsetenv("WEFT_ALGO");
    h.algo = "default";
  }
  weftUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (h.worldRank == 0) expectOk(weftGetUniqueId(&id), "weftGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  CommView view;
  setCurrentOp("weftCommInitRank algo=" + h.algo);
  expectOk(weftCommInitRank(&view.comm, h.worldSize, id, h.worldRank), "weftCommInitRank");
  view.rank = h.worldRank;
  view.size = h.worldSize;
  for (int r = 0; r < h.worldSize; ++r) view.ids.push_back(r);
  return view;
}

void destroyComm(CommView& view) {
  if (!view.comm) return;
  setCurrentOp("weftCommDestroy comm=" + view.name);
  expectOk(weftCommDestroy(view.comm), "weftCommDestroy(" + view.name + ")");
  view.comm = nullptr;
}

bool printBudgetLeft() { return gPrinted < static_cast<uint64_t>(harness().options.maxErrorsPrinted); }

void reportFailure(Report& report, const std::string& message) {
  ++report.failures;
  if (!printBudgetLeft()) return;
  ++gPrinted;
  std::fprintf(stderr, "[rank %d] FAIL %s\n", harness().worldRank, message.c_str());
  if (!printBudgetLeft()) {
    std::fprintf(stderr, "[rank %d] (further failures on this rank are counted, not printed)\n",
                 harness().worldRank);
  }
  std::fflush(stderr);
}

uint64_t sumOverRanks(uint64_t value) {
  uint64_t total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

bool sameOnAllRanks(uint64_t value) {
  uint64_t lo = 0, hi = 0;
  MPI_Allreduce(&value, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&value, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

void setCurrentOp(const std::string& what) { std::snprintf(gCurrentOp, sizeof gCurrentOp, "%s", what.c_str()); }

bool validHostsSpec(const std::string& spec) {
  if (spec.rfind("blocks:", 0) != 0 && spec.rfind("alternate:", 0) != 0) return false;
  return std::atoi(spec.c_str() + spec.find(':') + 1) >= 1;
}

void emulateHosts(const std::string& spec, int worldRank) {
  const int n = std::atoi(spec.c_str() + spec.find(':') + 1);
  const int host = spec[0] == 'b' ? worldRank / n : worldRank % n;
  setenv("WEFT_HOST_ID", ("emulated-host-" + std::to_string(host)).c_str(), 1);
}

void installWatchdog(int seconds) {
  if (seconds <= 0) return;
  std::snprintf(gWatchdogPrefix, sizeof gWatchdogPrefix,
                "[rank %d] WATCHDOG: still running after %d s (--timeout), during: ", harness().worldRank,
                seconds);
  signal(SIGALRM, onAlarm);
  alarm(static_cast<unsigned>(seconds));
}

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int finishProgram(const char* program, uint64_t failures, double startSeconds) {
  const Harness& h = harness();
  if (h.worldRank == 0) {
    std::printf("%s np=%d: %s (%llu failures, %.1f s)\n", program, h.worldSize, failures ? "FAILED" : "PASSED",
                static_cast<unsigned long long>(failures), nowSeconds() - startSeconds);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return failures ? 1 : 0;
}

}  // namespace colltest
