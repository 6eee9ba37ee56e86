// Process-wide plumbing: MPI bootstrap of communicators, fatal handling of non-success results, failure
// printing with a per-rank budget, the call salt, and a watchdog that names the operation a hang is in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common.h"
#include "weft/weft.h"

namespace colltest {

struct Harness {
  int worldRank = 0;
  int worldSize = 1;
  Options options;
  std::string algo = "default";  // WEFT_ALGO of the communicator in use, for messages
};
Harness& harness();

// A communicator as the test sees it: ids[q] is the input identity (world rank) of communicator rank q.
struct CommView {
  weftComm_t comm = nullptr;
  int rank = 0;
  int size = 1;
  std::vector<int> ids;
  std::string name = "world";
};

// Same sequence of calls on every rank, so the same salts everywhere; each section starts from its own
// base so that a rank skipping calls (not a member of a sub-communicator) stays in step afterwards.
uint64_t nextSalt();
void resetSalt(uint64_t base);

// Prints the call, its result, weftGetErrorString and weftGetLastErrorMessage, then aborts the job (the
// ranks are out of step after a failed collective, so going on would hang).
void expectOk(weftResult_t result, const std::string& what);
[[noreturn]] void fatal(const std::string& message);

// World communicator: rank 0 calls weftGetUniqueId, MPI_Bcast of the id, weftCommInitRank everywhere.
// algo: the WEFT_ALGO value to set first, or nullptr to unset it.
CommView createWorldComm(const char* algo);
void destroyComm(CommView& view);

// Counts a failure and prints the message (prefixed with the rank) while the per-rank budget lasts.
void reportFailure(Report& report, const std::string& message);
bool printBudgetLeft();

// Sum of a count over all ranks (MPI_Allreduce).
uint64_t sumOverRanks(uint64_t value);
// Whether a 64-bit value is the same on every rank (MPI_Allreduce of min and max).
bool sameOnAllRanks(uint64_t value);

// The operation in progress, shown by the watchdog when it fires.
void setCurrentOp(const std::string& what);
void installWatchdog(int seconds);
// Emulated hosts (--hosts): "blocks:N" puts N consecutive ranks on each host, "alternate:N" deals the ranks
// round N hosts. validHostsSpec checks the form; emulateHosts gives this rank its host's WEFT_HOST_ID (shm
// between the ranks of a host, tcp between hosts), before the first communicator is made.
bool validHostsSpec(const std::string& spec);
void emulateHosts(const std::string& spec, int worldRank);

double nowSeconds();

// The end of a test program's main: rank 0 prints "<program> np=N: PASSED|FAILED (failures, seconds)",
// then MPI_Finalize; returns the exit code (1 on any failure).
int finishProgram(const char* program, uint64_t failures, double startSeconds);

}  // namespace colltest
