#include "core/collectives/submit.h"

#include <vector>

#include "core/comm/comm.h"
#include "core/common/error.h"
#include "core/stream/stream.h"
#include "fusion/fusion_planner.h"

namespace weft {
namespace {

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

// Statistics of an operation that goes to the wire.
void countLaunch(const Op& op) {
  op.comm->collectivesLaunched.fetch_add(1, std::memory_order_relaxed);
  if (!op.members) return;
  size_t bytes = 0;
  for (const Op& m : *op.members) bytes += fusionBytes(m);
  op.comm->bytesFused.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace

void submit(const Op& op, weftStream* stream) {
  op.comm->opsSubmitted.fetch_add(1, std::memory_order_relaxed);
  if (group.depth > 0) {
    group.held.push_back({op, stream});
    return;
  }
  countLaunch(op);
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
  std::vector<HeldOp> issued = std::move(group.held);
  group.held.clear();
  std::vector<HeldOp> held =
      fuseGroup(issued, [](const weftComm* comm, size_t slot) { return comm->fusion.get(slot); });
  for (const HeldOp& h : held) countLaunch(h.op);
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
