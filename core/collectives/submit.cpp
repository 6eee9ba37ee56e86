#include "core/collectives/submit.h"

#include <vector>

#include "core/common/error.h"
#include "core/stream/stream.h"

namespace weft {
namespace {

struct HeldOp {
  Op op;
  weftStream* stream;
};

struct GroupState {
  int depth = 0;
  std::vector<HeldOp> held;
};
thread_local GroupState group;

// Takes the turns now (issue order), runs now or on the stream.
void issue(Batch batch, weftStream* stream) {
  std::vector<weftComm*> comms;
  for (const Op& op : batch.ops) comms.push_back(op.comm);
  std::vector<Ticket> tickets = issueTickets(comms);
  if (stream == nullptr) {
    runBatch(batch.ops, tickets);
  } else {
    stream->enqueue([batch = std::move(batch), tickets = std::move(tickets)] { runBatch(batch.ops, tickets); });
  }
}

}  // namespace

void submit(const Op& op, weftStream* stream) {
  if (group.depth > 0) {
    group.held.push_back({op, stream});
    return;
  }
  if (stream == nullptr) {  // the common case, without a vector in sight: small calls pay no allocation
    Ticket ticket = issueTicket(op.comm);
    return runBatch({&op, 1}, {&ticket, 1});
  }
  issue(Batch{{op}}, stream);
}

void groupStart() { ++group.depth; }

void groupEnd() {
  if (group.depth == 0) fail(weftInvalidUsage, "weftGroupEnd without a matching weftGroupStart");
  if (--group.depth > 0) return;
  std::vector<HeldOp> held = std::move(group.held);
  group.held.clear();
  // One batch per stream, in order of each stream's first op; the NULL-stream batch runs last, inline,
  // so the streams' batches are already queued when this thread blocks.
  std::vector<std::pair<weftStream*, Batch>> batches;
  for (HeldOp& h : held) {
    auto it = std::find_if(batches.begin(), batches.end(), [&](const auto& b) { return b.first == h.stream; });
    if (it == batches.end()) it = batches.insert(batches.end(), {h.stream, Batch{}});
    it->second.ops.push_back(h.op);
  }
  std::stable_partition(batches.begin(), batches.end(), [](const auto& b) { return b.first != nullptr; });
  for (auto& [stream, batch] : batches) issue(std::move(batch), stream);
}

}  // namespace weft
