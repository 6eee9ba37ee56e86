// From a checked collective to an algorithm: trivial cases, the tuner's choice, and avg's division.
#include <cstring>

#include "core/collectives/op.h"
#include "core/comm/comm.h"
#include "core/comm/comm_channel.h"
#include "core/common/log.h"
#include "core/reduce/reduce.h"

namespace weft {
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

// OpKind lists the operations in the order of this table.
weftCollType_t collTypeOf(OpKind kind) {
  constexpr weftCollType_t kTypes[] = {weftCollAllReduce, weftCollBroadcast,     weftCollReduce,
                                       weftCollAllGather, weftCollReduceScatter, weftCollAllToAll,
                                       weftCollSend,      weftCollRecv,          weftCollBarrier};
  return kTypes[static_cast<size_t>(kind)];
}

using AlgorithmFunction = void (*)(const CollArgs&, Channel&);

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

// Bytes the tuner weighs: the size of one rank's contribution.
size_t decisionBytes(const CollArgs& args) { return args.count * dataTypeSize(args.type); }

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
    std::memmove(a.recvbuff, a.sendbuff, bytes);
  }
  finishAverage(op, a);
}

// Hands the collective to the communicator's backend when there is one, WEFT_ALGO does not name an
// algorithm for it, and the backend takes it. True when it ran.
bool runOnBackend(const Op& op, Collective collective, const CollArgs& args) {
  weftComm& comm = *op.comm;
  if (comm.tuner.forces(collective)) return false;
  if (!comm.backendTried) {
    comm.backendTried = true;
    comm.backend = Backend::setUp(comm);
  }
  return comm.backend != nullptr && comm.backend->run(collTypeOf(op.kind), args, opName(op.kind));
}

}  // namespace

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
  Algorithm algorithm = comm.tuner.choose(collective, decisionBytes(args), comm.nranks);
  log::trace("{} of {} x {} with {}", opName(op.kind), args.count, dataTypeName(args.type),
             algorithmName(algorithm));
  functionFor(collective, algorithm)(args, channel);
  finishAverage(op, op.args);
}

}  // namespace weft
