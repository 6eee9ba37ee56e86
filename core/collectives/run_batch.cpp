// Runs a group of operations (or a single call) in issue order.
#include <map>
#include <memory>

#include "core/collectives/check_calls.h"
#include "core/collectives/op.h"
#include "core/comm/comm.h"
#include "core/comm/comm_channel.h"
#include "core/common/error.h"
#include "core/reduce/reduce.h"
#include "fusion/fused_run.h"

namespace weft {
namespace {

// Releases the turns however the batch ends, so later operations never wait forever on a failed one.
struct TurnGuard {
  std::span<const Ticket> tickets;
  ~TurnGuard() { finishTurns(tickets); }
};

void runOps(std::span<const Op> ops) {
  // Send/Recv start first and finish last: their partners may sit anywhere in the peer's group, and
  // collectives use a channel of their own, so nothing here waits on a message queued behind it.
  std::map<weftComm*, std::unique_ptr<CommChannel>> pointToPoint;
  std::map<weftComm*, std::vector<Request>> pending;
  for (const Op& op : ops) {
    if (op.kind != OpKind::Send && op.kind != OpKind::Recv) continue;
    auto& channel = pointToPoint[op.comm];
    if (!channel) channel = std::make_unique<CommChannel>(*op.comm, kPointToPointChannel, "weftSend/weftRecv");
    size_t bytes = op.args.count * dataTypeSize(op.args.type);
    pending[op.comm].push_back(op.kind == OpKind::Send ? channel->isend(op.args.root, op.args.sendbuff, bytes)
                                                       : channel->irecv(op.args.root, op.args.recvbuff, bytes));
  }
  for (const Op& op : ops) {
    if (op.kind == OpKind::Send || op.kind == OpKind::Recv) continue;
    if (op.comm->checkCalls) checkSameCall(op);
    if (op.independent) {
      runIndependent(op);
    } else if (op.members) {
      runFused(op);
    } else {
      runCollective(op);
    }
  }
  for (auto& [comm, requests] : pending) pointToPoint[comm]->waitAll(requests);
}

}  // namespace

void runBatch(std::span<const Op> ops, std::span<const Ticket> tickets) {
  TurnGuard guard{tickets};
  waitTurns(tickets);
  try {
    for (const Ticket& t : tickets) t.comm->throwIfFailed();
    runOps(ops);
  } catch (const Error& e) {
    // The communicators' connections may now hold half-finished messages: none can be trusted again,
    // and peers waiting on this rank must learn why (unless they all find the same failure themselves).
    const bool agreed = dynamic_cast<const AgreedError*>(&e) != nullptr;
    for (const Ticket& t : tickets) {
      if (agreed) {
        t.comm->setError(e.code(), e.what());
      } else {
        t.comm->failAndTell(e.code(), e.what());
      }
    }
    throw;
  }
}

}  // namespace weft
