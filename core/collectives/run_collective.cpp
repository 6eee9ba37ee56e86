// From a checked collective to an algorithm: trivial cases, the tuner's choice, and avg's division.
#include <vector>

#include "core/algorithms/sub_channel.h"
#include "core/collectives/bounce.h"
#include "core/collectives/op.h"
#include "core/comm/comm.h"
#include "core/comm/comm_channel.h"
#include "core/common/error.h"
#include "core/common/log.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"

namespace weft {

// OpKind lists the operations in the order of this table.
weftCollType_t collTypeOf(OpKind kind) {
  constexpr weftCollType_t kTypes[] = {weftCollAllReduce, weftCollBroadcast,     weftCollReduce,
                                       weftCollAllGather, weftCollReduceScatter, weftCollAllToAll,
                                       weftCollSend,      weftCollRecv,          weftCollBarrier};
  return kTypes[static_cast<size_t>(kind)];
}

namespace {

Collective collectiveOf(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
      return Collective::AllReduce;
    case OpKind::Broadcast:
      return Collective::Broadcast;
    case OpKind::Reduce:
      return Collective::Reduce;
    case OpKind::AllGather:
      return Collective::AllGather;
    case OpKind::ReduceScatter:
      return Collective::ReduceScatter;
    case OpKind::AllToAll:
      return Collective::AllToAll;
    default:
      return Collective::Barrier;
  }
}

using AlgorithmFunction = void (*)(const CollArgs&, Channel&);

// Bytes the tuner weighs: the size of one rank's contribution.
size_t decisionBytes(const CollArgs& args) { return args.count * dataTypeSize(args.type); }

AlgorithmFunction functionFor(Collective c, Algorithm a) {
  switch (c) {
    case Collective::AllReduce:
      if (a == Algorithm::Ring) return allReduceRing;
      if (a == Algorithm::Rabenseifner) return allReduceRabenseifner;
      return allReduceRecursiveDoubling;
    case Collective::ReduceScatter:
      return a == Algorithm::Rabenseifner ? reduceScatterRabenseifner : reduceScatterRing;
    case Collective::AllGather:
      return a == Algorithm::Bruck ? allGatherBruck : allGatherRing;
    case Collective::Broadcast:
      return broadcastBinomialTree;
    case Collective::Reduce:
      return reduceBinomialTree;
    case Collective::AllToAll:
      return allToAllPairwise;
    default:
      return nullptr;
  }
}

// Hosts take ranks in turn: a ring in host order crosses between hosts numHosts times, not p times. Each
// member's block stays where its rank's block is.
void ringInHostOrder(Collective c, const CollArgs& args, Channel& channel, const HostLayout& hosts) {
  const std::vector<int>& order = hosts.hostOrder();
  SubChannel ring(channel, order);
  if (c == Collective::AllReduce) return allReduceRing(args, ring);
  if (c == Collective::AllGather) return allGatherRingOrdered(args, ring, order);
  reduceScatterRingOrdered(args, ring, order);
}

// A hierarchical algorithm (AllReduce, AllGather, Broadcast). AllReduce's allreduce between hosts is the
// model's cheapest for the slice each host sends (the whole vector when hosts differ in size and only
// their leaders take part).
void runHierarchical(Collective c, const CollArgs& args, Channel& channel, const weftComm& comm) {
  if (c == Collective::AllGather) return allGatherHierarchical(args, channel, comm.hosts);
  if (c == Collective::Broadcast) return broadcastHierarchical(args, channel, comm.hosts);
  const TuneShape& shape = comm.tuner.shape();
  size_t slice = decisionBytes(args);
  if (comm.hosts.uniform()) slice /= static_cast<size_t>(shape.ranksPerHost);
  const Algorithm between =
      comm.tuner.model().cheapestFlat(shape.interTransport, Collective::AllReduce, slice, shape.numHosts);
  allReduceHierarchical(args, channel, comm.hosts, functionFor(Collective::AllReduce, between));
}

// weftAvg reduces as a sum; each rank then divides what it owns of the result.
void finishAverage(const Op& op, const CollArgs& args) {
  if (op.args.op != weftAvg) return;
  int nranks = op.comm->nranks;
  switch (op.kind) {
    case OpKind::AllReduce:
    case OpKind::ReduceScatter:
      divideBy(args.recvbuff, args.count, args.type, nranks);
      break;
    case OpKind::Reduce:
      if (op.comm->rank == args.root) divideBy(args.recvbuff, args.count, args.type, nranks);
      break;
    default:
      break;
  }
}

// One rank: every collective is a copy (or nothing, in place).
void runAlone(const Op& op) {
  const CollArgs& a = op.args;
  size_t bytes = a.count * dataTypeSize(a.type);
  if (a.recvbuff != nullptr && a.sendbuff != nullptr && a.recvbuff != a.sendbuff && bytes > 0) {
    copyBytes(a.recvbuff, a.sendbuff, bytes);  // apart: validate() refuses a partial overlap
  }
  finishAverage(op, a);
}

// The communicator's backend, unless WEFT_ALGO names an algorithm for the collective at this size (set up
// at the first collective); null when there is none.
Backend* backendFor(const Op& op, Collective collective) {
  weftComm& comm = *op.comm;
  if (comm.tuner.forces(collective, decisionBytes(op.args))) return nullptr;
  if (!comm.backendTried) {
    comm.backendTried = true;
    comm.backend = Backend::setUp(comm);
  }
  return comm.backend.get();
}

// Hands the collective to the communicator's backend when there is one and it takes it. True when it ran.
bool runOnBackend(const Op& op, Collective collective, const CollArgs& args) {
  Backend* backend = backendFor(op, collective);
  if (backend == nullptr) return false;
  return runBouncedOnBackend(*backend, op, args) || backend->run(collTypeOf(op.kind), args, opName(op.kind));
}

}  // namespace

Backend* listBackendFor(const Op& op) {
  if (op.comm->nranks == 1 || op.args.count == 0) return nullptr;
  Backend* backend = backendFor(op, collectiveOf(op.kind));
  CollArgs total = op.args;
  if (total.op == weftAvg) total.op = weftSum;
  return backend != nullptr && backend->supportsList(collTypeOf(op.kind), total) ? backend : nullptr;
}

void runListOnBackend(Backend& backend, const Op& op, size_t count,
                      std::span<const weftBackendBuffer_v1> buffers) {
  CollArgs total = op.args;
  total.count = count;
  if (total.op == weftAvg) total.op = weftSum;
  if (!backend.runList(collTypeOf(op.kind), total, buffers, opName(op.kind))) {
    fail(weftInternalError, "{}: the {} backend took a buffer list of {} elements, then declined it",
         opName(op.kind), backend.name(), count);
  }
}

void finishFusedAverages(const Op& op) {
  for (const Op& m : *op.members) finishAverage(m, m.args);
}

void runCollective(const Op& op) {
  weftComm& comm = *op.comm;
  Collective collective = collectiveOf(op.kind);
  if (comm.nranks == 1 && op.kind == OpKind::Barrier) return;
  if (op.args.count == 0 && op.kind != OpKind::Barrier) return;
  if (comm.nranks == 1) return runAlone(op);
  CollArgs args = op.args;
  if (args.op == weftAvg) args.op = weftSum;
  if (runOnBackend(op, collective, args)) return finishAverage(op, op.args);
  CommChannel channel(comm, kCollectiveChannel, collectiveName(collective));
  if (op.kind == OpKind::Barrier) return barrierDissemination(channel);
  const Algorithm algorithm =
      op.algorithm != Algorithm::Count ? op.algorithm : comm.tuner.choose(collective, decisionBytes(args));
  log::trace("{} of {} x {} with {}", opName(op.kind), args.count, dataTypeName(args.type),
             algorithmName(algorithm));
  if (algorithm == Algorithm::Hierarchical) {
    runHierarchical(collective, args, channel, comm);
  } else if (algorithm == Algorithm::Ring && !comm.hosts.contiguous()) {
    ringInHostOrder(collective, args, channel, comm.hosts);
  } else {
    functionFor(collective, algorithm)(args, channel);
  }
  finishAverage(op, op.args);
}

bool runRingOnCallBuffers(const Op& op) {
  weftComm& comm = *op.comm;
  if (comm.nranks == 1 || op.args.count == 0 || runsOnBackend(op)) return false;
  // Packing costs two copies of the vector, more than the bandwidth algorithms differ by at these sizes;
  // Bruck (AllGather) and recursive doubling are chosen where latency counts.
  const Collective collective = collectiveOf(op.kind);
  const Algorithm chosen = comm.tuner.choose(collective, decisionBytes(op.args));
  if (chosen != Algorithm::Ring && !(chosen == Algorithm::Rabenseifner && collective != Collective::AllGather)) {
    return false;
  }
  std::vector<FusedCall>& calls = laneOf(comm).fusedCalls;
  calls.clear();
  for (const Op& m : *op.members) calls.push_back({m.args.sendbuff, m.args.recvbuff, m.args.count});
  CollArgs args = op.args;
  if (args.op == weftAvg) args.op = weftSum;
  args.calls = calls;
  log::trace("{} of {} x {} over {} calls' buffers with ring", opName(op.kind), args.count,
             dataTypeName(args.type), calls.size());
  CommChannel channel(comm, kCollectiveChannel, collectiveName(collective));
  if (comm.hosts.contiguous()) {
    functionFor(collective, Algorithm::Ring)(args, channel);
  } else {
    ringInHostOrder(collective, args, channel, comm.hosts);
  }
  for (const Op& m : *op.members) finishAverage(m, m.args);
  return true;
}

void pinAlgorithm(Op& op) {
  if (op.members || op.comm->nranks == 1 || op.kind == OpKind::Barrier || isPointToPoint(op) || runsOnBackend(op))
    return;
  op.algorithm = op.comm->tuner.choose(collectiveOf(op.kind), decisionBytes(op.args));
}

bool runsOnBackend(const Op& op) {
  return op.comm->nranks > 1 && backendFor(op, collectiveOf(op.kind)) != nullptr;
}

namespace {

// Runs the calls through the backend's runMany (callOf(i): the i-th call, an Op); false, having run nothing,
// when there is none or it does not take them all.
template <typename CallOf>
bool runManyOnBackend(const Op& op, size_t calls, CallOf callOf) {
  Backend* backend = op.comm->nranks > 1 ? backendFor(op, collectiveOf(op.kind)) : nullptr;
  if (backend == nullptr) return false;
  std::vector<weftBackendOp_v1>& ops = op.comm->backendOps;  // kept for the next run: no allocation then
  ops.clear();
  for (size_t i = 0; i < calls; ++i) {
    decltype(auto) m = callOf(i);  // a reference to a member, or a call made from the unit
    CollArgs a = m.args;
    if (a.op == weftAvg) a.op = weftSum;
    ops.push_back({collTypeOf(m.kind), a.sendbuff, a.recvbuff, a.count, a.type, a.op, a.root});
  }
  if (!backend->runMany(ops, opName(op.kind))) return false;
  for (size_t i = 0; i < calls; ++i) {
    decltype(auto) m = callOf(i);  // a reference to a member, or a call made from the unit
    finishAverage(m, m.args);
  }
  return true;
}

}  // namespace

bool runMembersOnBackend(const Op& op) {
  return runManyOnBackend(op, op.members->size(), [&](size_t i) -> const Op& { return (*op.members)[i]; });
}

void runIndependent(const Op& op) {
  if (runMembersOnBackend(op)) return;
  for (const Op& m : *op.members) runCollective(m);
}

void runIdenticalCalls(const Op& unit, std::span<const CallBuffers> calls) {
  auto callOf = [&](size_t i) {
    Op call = unit;
    call.args.sendbuff = calls[i].sendbuff;
    call.args.recvbuff = calls[i].recvbuff;
    return call;
  };
  if (runManyOnBackend(unit, calls.size(), callOf)) return;
  for (size_t i = 0; i < calls.size(); ++i) runCollective(callOf(i));
}

}  // namespace weft
