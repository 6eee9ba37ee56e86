#include "core/collectives/submit.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "core/comm/comm.h"
#include "core/common/error.h"
#include "core/common/thread_object.h"
#include "core/stream/stream.h"
#include "fusion/fusion_planner.h"

namespace weft {
namespace {

struct GroupState {
  int depth = 0;
  uint64_t serial = 0;  // the open group's number (unique in the process), taken when a plan first records in it
  // Made at the first group with a call that may fuse, then kept (reset per group) with its memory.
  std::unique_ptr<FusionPlanner> planner;
  bool planning = false;  // the open group uses the planner
  // Until then its Send/Recv on the NULL stream are only held here, in order, in a vector kept from group to
  // group: a group of Send/Recv alone, as pipeline parallelism issues, runs without the planner and
  // allocates nothing.
  std::vector<Op> plain;
  // Runs the NULL-stream launches that go before the group's end (full fusion buckets), so that they
  // overlap the rest of the group; weftGroupEnd waits for it. Made at the first such launch.
  std::unique_ptr<weftStream> early;
  // weftGroupEnd's launches on the NULL stream, run on this thread: kept from group to group.
  std::vector<Op> inlineLaunches;
};
// This thread's (core/common/thread_object.h); each entry point takes it once and passes it on.
GroupState& groupState() { return ThreadObject<GroupState>::get(); }
std::atomic<uint64_t> groupsOpened{0};  // numbers groups across threads, so two threads' never share one

// The open group's number, or 0 outside a group. Numbered on first use: most groups are never recorded, and
// an atomic increment per group is a fair part of a small Send/Recv's cost.
uint64_t openGroupSerial() {
  GroupState& group = groupState();
  if (group.depth == 0) return 0;
  if (group.serial == 0) group.serial = groupsOpened.fetch_add(1, std::memory_order_relaxed) + 1;
  return group.serial;
}

// The turns of a batch's communicators, taken now (issue order).
std::vector<Ticket> ticketsFor(std::span<const Op> ops) {
  std::vector<weftComm*> comms;
  for (const Op& op : ops) {
    if (std::find(comms.begin(), comms.end(), op.comm) == comms.end()) comms.push_back(op.comm);
  }
  return issueTickets(comms);
}

// Takes the turns now, runs on this thread. One communicator (the usual group) takes one ticket, without
// allocating.
void runInline(std::span<const Op> ops) {
  weftComm* comm = ops.front().comm;
  if (std::all_of(ops.begin(), ops.end(), [&](const Op& op) { return op.comm == comm; })) {
    Ticket ticket = issueTicket(comm);
    return runBatch(ops, {&ticket, 1});
  }
  runBatch(ops, ticketsFor(ops));
}

// Takes the turns now, runs on the stream.
void enqueue(Batch batch, weftStream* stream) {
  std::vector<Ticket> tickets = ticketsFor(batch.ops);
  stream->enqueue([batch = std::move(batch), tickets = std::move(tickets)] { runBatch(batch.ops, tickets); });
}

// Statistics of an operation that goes to the wire.
void countLaunch(const Op& op) {
  op.comm->collectivesLaunched.fetch_add(op.independent ? op.members->size() : 1, std::memory_order_relaxed);
  if (!op.members || op.independent) return;
  size_t bytes = 0;
  for (const Op& m : *op.members) bytes += fusionBytes(m);
  op.comm->bytesFused.fetch_add(bytes, std::memory_order_relaxed);
}

// Issues the launches the open group's planner has ready: a full bucket goes while the application still
// issues the rest of the group. Tickets are taken now, so issue order stays the same on every rank.
void launchReady(GroupState& group) {
  for (const std::vector<size_t>& members : group.planner->takeReady()) {
    HeldOp launch = group.planner->launchOf(members);
    countLaunch(launch.op);
    weftStream* stream = launch.stream;
    if (stream == nullptr) {
      if (!group.early) group.early = std::make_unique<weftStream>();
      stream = group.early.get();
    }
    enqueue(Batch{{std::move(launch.op)}}, stream);
  }
}

// The open group's planner, made at its first call that may fuse, taking over the calls held before it.
void startPlanner(GroupState& group) {
  if (group.planning) return;
  if (group.planner) {
    group.planner->reset();
  } else {
    group.planner = std::make_unique<FusionPlanner>(fusionSettingOf);
  }
  group.planning = true;
  for (const Op& op : group.plain) group.planner->add({op, nullptr});
  group.plain.clear();
}

// Runs a group of Send/Recv alone when they are all on one communicator: one batch, one ticket. False,
// leaving them held, when they span communicators.
bool runPlainGroup(GroupState& group) {
  if (group.plain.empty()) return true;
  weftComm* comm = group.plain.front().comm;
  if (!std::all_of(group.plain.begin(), group.plain.end(), [&](const Op& op) { return op.comm == comm; }))
    return false;
  // Each is launched alone (countLaunch's 1 for every one of them), counted with one atomic add.
  comm->collectivesLaunched.fetch_add(group.plain.size(), std::memory_order_relaxed);
  struct Release {  // the held calls are this group's only, however the batch ends
    std::vector<Op>& plain;
    ~Release() { plain.clear(); }
  } release{group.plain};
  Ticket ticket = issueTicket(comm);
  runBatch(group.plain, {&ticket, 1});
  return true;
}

}  // namespace

FusionSetting fusionSettingOf(const weftComm* comm, size_t slot) { return comm->fusion.get(slot); }

void submit(const Op& op, weftStream* stream) {
  GroupState& group = groupState();
  if (PlanRecorder* recorder = op.comm->recording.active(); recorder != nullptr) {
    return recorder->record(op, stream, openGroupSerial());  // runs at weftPlanLaunch
  }
  op.comm->opsSubmitted.fetch_add(1, std::memory_order_relaxed);
  if (group.depth > 0) {
    if (!group.planning && stream == nullptr && isPointToPoint(op)) {
      group.plain.push_back(op);
      return;
    }
    startPlanner(group);
    group.planner->add({op, stream});
    return launchReady(group);
  }
  countLaunch(op);
  if (stream == nullptr) {  // the common case, without a vector in sight: small calls pay no allocation
    Ticket ticket = issueTicket(op.comm);
    return runBatch({&op, 1}, {&ticket, 1});
  }
  enqueue(Batch{{op}}, stream);
}

void groupStart() {
  GroupState& group = groupState();
  if (group.depth++ > 0) return;
  group.planning = false;
  group.plain.clear();
  group.serial = 0;
}

void launchPlan(const std::shared_ptr<PlanRun>& run, size_t recordedOps, weftStream* stream) {
  if (!run) return;
  weftComm* comm = &run->comm();
  comm->opsSubmitted.fetch_add(recordedOps, std::memory_order_relaxed);
  comm->collectivesLaunched.fetch_add(run->collectivesPerLaunch() + run->pointToPoint().size(),
                                      std::memory_order_relaxed);
  comm->bytesFused.fetch_add(run->bytesFusedPerLaunch(), std::memory_order_relaxed);
  // One communicator, one ticket: the NULL stream's launch allocates nothing; a stream's shares the
  // run (a plan destroyed while its launch waits in the queue leaves it to the launch).
  Ticket ticket = issueTicket(comm);
  if (stream == nullptr) {
    const BatchCollectives collectives = run->asBatchCollectives();
    return runBatch(run->pointToPoint(), {&ticket, 1}, &collectives);
  }
  stream->enqueue([run, ticket] {
    const BatchCollectives collectives = run->asBatchCollectives();
    runBatch(run->pointToPoint(), {&ticket, 1}, &collectives);
  });
}

void groupEnd() {
  GroupState& group = groupState();
  if (group.depth == 0) fail(weftInvalidUsage, "weftGroupEnd without a matching weftGroupStart");
  if (--group.depth > 0) return;
  if (!group.planning && runPlainGroup(group)) return;
  startPlanner(group);
  group.planning = false;  // however this ends, the next group starts afresh
  // One batch per stream, in order of each stream's first op; the NULL-stream batch runs last, on this
  // thread, so the streams' batches are already queued when this thread blocks.
  std::vector<Op>& inlineLaunches = group.inlineLaunches;
  struct Release {  // its operations (and the fused ones' member lists) are this group's only
    std::vector<Op>& ops;
    ~Release() { ops.clear(); }
  } release{inlineLaunches};
  std::vector<std::pair<weftStream*, Batch>> batches;
  for (const std::vector<size_t>& members : group.planner->takeAll()) {
    HeldOp launch = group.planner->launchOf(members);
    countLaunch(launch.op);
    if (launch.stream == nullptr) {
      inlineLaunches.push_back(std::move(launch.op));
      continue;
    }
    auto it =
        std::find_if(batches.begin(), batches.end(), [&](const auto& b) { return b.first == launch.stream; });
    if (it == batches.end()) it = batches.insert(batches.end(), {launch.stream, Batch{}});
    it->second.ops.push_back(std::move(launch.op));
  }
  try {
    for (auto& [stream, batch] : batches) enqueue(std::move(batch), stream);
    if (!inlineLaunches.empty()) runInline(inlineLaunches);
  } catch (...) {
    // The launches that went early are this group's too: done (or failed) before this call returns.
    if (group.early) {
      try {
        group.early->synchronize();
      } catch (const Error&) {  // the first failure is the one reported
      }
    }
    throw;
  }
  if (group.early) group.early->synchronize();
}

}  // namespace weft
