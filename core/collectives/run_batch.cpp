// Runs a group of operations (or a single call) in issue order.
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/collectives/check_calls.h"
#include "core/collectives/op.h"
#include "core/collectives/point_to_point.h"
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

// The point-to-point channels of a batch's Send/Recv, one per communicator, made at first use. A batch
// rarely spans several communicators: the first needs no allocation.
class PointToPointChannels {
 public:
  CommChannel& of(weftComm& comm) {
    if (first_ && firstComm_ == &comm) return *first_;
    for (auto& [c, channel] : more_) {
      if (c == &comm) return *channel;
    }
    if (!first_) {
      firstComm_ = &comm;
      return first_.emplace(comm, kPointToPointChannel, "weftSend/weftRecv");
    }
    return *more_
                .emplace_back(&comm,
                              std::make_unique<CommChannel>(comm, kPointToPointChannel, "weftSend/weftRecv"))
                .second;
  }
  void waitAll() {
    if (first_) first_->waitKept();
    for (auto& entry : more_) entry.second->waitKept();
  }

 private:
  std::optional<CommChannel> first_;
  weftComm* firstComm_ = nullptr;
  std::vector<std::pair<weftComm*, std::unique_ptr<CommChannel>>> more_;
};

void runCollectives(std::span<const Op> ops, const BatchCollectives* collectives) {
  if (collectives != nullptr) collectives->run(collectives->context);
  for (const Op& op : ops) {
    if (isPointToPoint(op)) continue;
    if (op.comm->checkCalls) checkSameCall(op);
    runOperation(op);
  }
}

void runOps(std::span<const Op> ops, const BatchCollectives* collectives) {
  // Most batches are one collective: they need no point-to-point channel (whose setup would cost a fair part
  // of a small collective).
  if (std::none_of(ops.begin(), ops.end(), [](const Op& op) { return isPointToPoint(op); })) {
    return runCollectives(ops, collectives);
  }
  if (collectives == nullptr && runPointToPointDirect(ops)) return;  // a group of Send/Recv alone, mostly
  // Send/Recv start first and finish last: their partners may sit anywhere in the peer's group, and
  // collectives use a channel of their own, so nothing here waits on a message queued behind it.
  PointToPointChannels pointToPoint;
  for (const Op& op : ops) {
    if (!isPointToPoint(op)) continue;
    CommChannel& channel = pointToPoint.of(*op.comm);
    size_t bytes = op.args.count * dataTypeSize(op.args.type);
    channel.keep(op.kind == OpKind::Send ? channel.isend(op.args.root, op.args.sendbuff, bytes)
                                         : channel.irecv(op.args.root, op.args.recvbuff, bytes));
  }
  runCollectives(ops, collectives);
  pointToPoint.waitAll();
}

}  // namespace

void runOperation(const Op& op) {
  if (op.independent) {
    runIndependent(op);
  } else if (op.members) {
    runFused(op);
  } else {
    runCollective(op);
  }
}

void runBatch(std::span<const Op> ops, std::span<const Ticket> tickets, const BatchCollectives* collectives) {
  TurnGuard guard{tickets};
  waitTurns(tickets);
  try {
    for (const Ticket& t : tickets) t.comm->throwIfFailed();
    runOps(ops, collectives);
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
