// Runs a group of operations (or a single call) in issue order.
#include <array>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

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

// The point-to-point channels of a batch's Send/Recv, one per communicator, made at first use. A batch
// rarely spans many communicators: the first few need no allocation.
class PointToPointChannels {
 public:
  CommChannel& of(weftComm& comm) {
    for (size_t i = 0; i < used_; ++i) {
      if (comms_[i] == &comm) return *inline_[i];
    }
    for (auto& [c, channel] : more_) {
      if (c == &comm) return *channel;
    }
    if (used_ < kInline) {
      comms_[used_] = &comm;
      inline_[used_].emplace(comm, kPointToPointChannel, "weftSend/weftRecv");
      return *inline_[used_++];
    }
    return *more_
                .emplace_back(&comm,
                              std::make_unique<CommChannel>(comm, kPointToPointChannel, "weftSend/weftRecv"))
                .second;
  }
  void waitAll() {
    for (size_t i = 0; i < used_; ++i) inline_[i]->waitKept();
    for (auto& entry : more_) entry.second->waitKept();
  }

 private:
  static constexpr size_t kInline = 4;
  std::array<std::optional<CommChannel>, kInline> inline_;
  std::array<weftComm*, kInline> comms_{};
  size_t used_ = 0;
  std::vector<std::pair<weftComm*, std::unique_ptr<CommChannel>>> more_;
};

void runOps(std::span<const Op> ops, const BatchCollectives* collectives) {
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
  if (collectives != nullptr) collectives->run(collectives->context);
  for (const Op& op : ops) {
    if (isPointToPoint(op)) continue;
    if (op.comm->checkCalls) checkSameCall(op);
    runOperation(op);
  }
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
