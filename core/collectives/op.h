// One operation as issued through the C ABI, checked and ready to run.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/comm/ordering.h"
#include "core/tuner/algorithm_names.h"
#include "weft/plugin.h"
#include "weft/weft.h"

struct weftComm;

namespace weft {

class Backend;

// The order is relied on by collTypeOf() (run_collective.cpp).
enum class OpKind { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll, Send, Recv, Barrier };

struct Op {
  OpKind kind;
  weftComm* comm;
  CollArgs args;     // for Send/Recv: sendbuff/recvbuff, count, type; root holds the peer
  int fusionId = 1;  // 0: never fused (fusion/fusion_planner.h)
  // Set on a fused operation: the calls it runs as one collective (args.count is their total; the
  // buffers are chosen when it runs, see fusion/fused_run.h). With `independent`, a plan's run of
  // consecutive calls instead, each its own collective, that a backend may run in fewer steps.
  std::shared_ptr<const std::vector<Op>> members;
  bool independent = false;
  // Count: the tuner chooses when it runs. Otherwise the algorithm it runs with, chosen once (pinAlgorithm).
  Algorithm algorithm = Algorithm::Count;
};

const char* opName(OpKind kind);
// The plugin ABI's name of the operation.
weftCollType_t collTypeOf(OpKind kind);
inline bool isPointToPoint(const Op& op) { return op.kind == OpKind::Send || op.kind == OpKind::Recv; }

// Checks everything a caller can get wrong before anything runs; throws weftInvalidArgument naming the
// argument (NULL buffer with count > 0, unknown type or op, root or peer out of range, byte size
// overflow) or the communicator's recorded failure.
void validate(const Op& op);

// Runs one collective (not Send/Recv) on its communicator. The caller holds the turn.
void runCollective(const Op& op);
// Sets op.algorithm to what the tuner chooses for it now, when it runs Weft's algorithms (not the backend:
// may set the backend up, under the turn); a plan's first launch pins its calls' so later launches skip the
// tuner. Leaves fused operations (their pieces are chosen by their own sizes) and Send/Recv alone.
void pinAlgorithm(Op& op);
// The communicator's backend when it takes a fused operation (op.members set) as lists of buffers (the
// decision is the same on every rank); null otherwise. runListOnBackend then runs `count` elements of it
// (the whole, or a piece cut alike on every rank) on a list of buffers, and finishFusedAverages divides
// the members' results once all have run (weftAvg).
Backend* listBackendFor(const Op& op);
void runListOnBackend(Backend& backend, const Op& op, size_t count, std::span<const weftBackendBuffer_v1> buffers);
void finishFusedAverages(const Op& op);
// Runs a fused AllReduce, AllGather or ReduceScatter (op.members set) with Weft's ring straight on its calls'
// buffers, sending and receiving them as vectored messages: when the communicator runs Weft's algorithms and
// the tuner picks a bandwidth algorithm (the ring, or Rabenseifner) for the total, alike on every rank.
// False, having run nothing, otherwise.
bool runRingOnCallBuffers(const Op& op);
// Whether op goes to the communicator's backend (set up at the first call; the same answer on every rank)
// rather than to Weft's message-passing algorithms.
bool runsOnBackend(const Op& op);
// Runs op's members through the backend's runMany (each with exactly its own result, several per step where
// the backend can); false, having run nothing, when there is no backend or it does not take them all.
bool runMembersOnBackend(const Op& op);
// Runs op's independent members (op.independent), through the backend's runMany where it takes them all,
// else one by one.
void runIndependent(const Op& op);

// The buffers of one of several calls alike but for them: a plan keeps identical calls (a reused subgraph's)
// as one operation and these (fusion/plan_program.h).
struct CallBuffers {
  const void* sendbuff;
  void* recvbuff;
};
// Runs `unit` on each of `calls`' buffers, independent calls as runIndependent runs them (the unit's own
// buffers are not used).
void runIdenticalCalls(const Op& unit, std::span<const CallBuffers> calls);

// Runs a collective operation of any form: one call, a fused group (op.members) or a run of independent
// calls (op.independent). The caller holds the turn.
void runOperation(const Op& op);

// A plan launch's collectives (fusion/plan.h), run by runBatch in place of the batch's own: run(context).
struct BatchCollectives {
  void (*run)(void* context);
  void* context;
};

// Runs a batch (a group, or one call) on the calling thread: takes the turns, starts every Send/Recv,
// runs the collectives in order (or `collectives`, when given), then waits for the Send/Recvs. Throws on
// failure, after recording it on the communicators involved.
struct Batch {
  std::vector<Op> ops;
};
void runBatch(std::span<const Op> ops, std::span<const Ticket> tickets,
              const BatchCollectives* collectives = nullptr);

}  // namespace weft
