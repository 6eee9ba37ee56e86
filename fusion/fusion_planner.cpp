#include "fusion/fusion_planner.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>

#include "core/comm/comm.h"
#include "core/reduce/reduce.h"
#include "fusion/footprint.h"

namespace weft {
// The types of FusionPlanner::State's fields, in a namespace with a name: a class with linkage must not hold
// types of an unnamed one (GCC's -Wsubobject-linkage, which a unity build shows).
namespace fusion_planning {

// What makes operations compatible; segment is the Index mode's.
using BucketKey = std::tuple<OpKind, const weftComm*, weftDataType_t, weftRedOp_t, const weftStream*, int, int>;

// A bucket: the fusable calls that one launch will run, while more may still join it.
struct Bucket {
  size_t launch = 0;  // its launch's number
  size_t bytes = 0;
  RangeSet memberWrites;
  // Memory touched by calls issued since the bucket opened that did not join it.
  RangeSet laterReads;
  RangeSet laterWrites;

  // Whether a call with footprint f may run at the bucket's place instead of its own.
  bool mayJoin(const Footprint& f) const {
    return !memberWrites.overlaps(f.read) && !memberWrites.overlaps(f.written) && !laterWrites.overlaps(f.read) &&
           !laterWrites.overlaps(f.written) && !laterReads.overlaps(f.written);
  }
};

// A bucket that calls of its key may still join.
struct OpenBucket {
  BucketKey key;
  size_t bucket;
};

// What the planner keeps per communicator of a group: its settings, looked up once per group, and the Index
// mode's counter of its AllReduces.
struct CommPlan {
  const weftComm* comm;
  int allReduceIndex = 0;
  std::array<std::optional<FusionSetting>, 3> settings{};  // by slot
};

}  // namespace fusion_planning

namespace {

constexpr size_t kSegment = 6;  // the BucketKey's last field

std::optional<size_t> slotOf(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
      return 0;
    case OpKind::AllGather:
      return 1;
    case OpKind::ReduceScatter:
      return 2;
    default:
      return std::nullopt;
  }
}

// Fused operations' member lists kept at most: more are made and dropped.
constexpr size_t kSpareMemberLists = 4;

}  // namespace

size_t fusionBytes(const Op& op) {
  size_t bytes = op.args.count * dataTypeSize(op.args.type);
  return op.kind == OpKind::ReduceScatter ? bytes * static_cast<size_t>(op.comm->nranks) : bytes;
}

// How a launch may go: only buckets go before the group's end (Send/Recv must start together with the rest
// of the group, and a call that does not fuse gains nothing by going alone on another thread).
struct LaunchState {
  bool closed;  // nothing can join it any more
  bool bucket;
};

// The planner's memory is kept from group to group (reset() empties it without freeing it), so that a
// training step's group of a thousand gradients allocates nothing once the first step has run: with glibc,
// freeing and reallocating the group's few hundred KiB each time trimmed and regrew the heap in about half
// of the launches, and every group paid for the page faults (commperf --fusion 1000:4K on shm, 2 ranks,
// 2026-11-26: fused 1.9-2.2 ms in those launches against 1.1-1.25 ms in the others).
//
// A group's communicators and open buckets are few (usually one of each), so they lie in vectors searched
// from the front: until 2026-11-29 they were maps (pmr), whose three lookups per call cost about a third of
// the planner's 540 instructions per call (callgrind, np 2, 4000 x 1 KiB AllReduces fused).
struct FusionPlanner::State {
  using Bucket = fusion_planning::Bucket;
  using BucketKey = fusion_planning::BucketKey;
  using CommPlan = fusion_planning::CommPlan;
  using OpenBucket = fusion_planning::OpenBucket;

  explicit State(FusionSettingOf of) : settingOf(std::move(of)) {}

  FusionSettingOf settingOf;
  std::vector<CommPlan> comms;  // this group's
  std::vector<HeldOp> calls;
  // Launches in launch order, each the indices of its calls: [0, launchCount) are this group's; those
  // beyond are kept for their capacity.
  std::vector<std::vector<size_t>> members;
  std::vector<LaunchState> launches;
  size_t launchCount = 0;
  size_t taken = 0;             // launches taken so far
  std::vector<Bucket> buckets;  // [0, bucketCount) are this group's
  size_t bucketCount = 0;
  std::vector<OpenBucket> open;  // in no particular order
  // Member lists of fused operations, reused once no operation holds them any more.
  std::vector<std::shared_ptr<std::vector<Op>>> spareMembers;

  CommPlan& commPlan(const weftComm* comm);
  const FusionSetting& setting(CommPlan& comm, size_t slot);
  size_t newLaunch(bool closed, bool bucket);
  size_t newBucket(size_t launch);
  // Nothing can join open[at] any more: its launch may go, and it leaves `open` (the last entry takes its place).
  void close(size_t at);
  void closeSegmentsBefore(const weftComm* comm, int segment);
  void add(const HeldOp& call);
  std::shared_ptr<std::vector<Op>> memberList();
  void reset();
};

FusionPlanner::FusionPlanner(FusionSettingOf settingOf) : state_(std::make_unique<State>(std::move(settingOf))) {}
FusionPlanner::~FusionPlanner() = default;
void FusionPlanner::add(const HeldOp& call) { state_->add(call); }
void FusionPlanner::reset() { state_->reset(); }

void FusionPlanner::State::reset() {
  comms.clear();
  calls.clear();
  for (size_t i = 0; i < launchCount; ++i) members[i].clear();
  launchCount = 0;
  taken = 0;
  for (size_t i = 0; i < bucketCount; ++i) {
    buckets[i].memberWrites.clear();
    buckets[i].laterReads.clear();
    buckets[i].laterWrites.clear();
  }
  bucketCount = 0;
  open.clear();
}

size_t FusionPlanner::State::newLaunch(bool closed, bool bucket) {
  if (launchCount == members.size()) {
    members.emplace_back();
    launches.emplace_back();
  }
  launches[launchCount] = {closed, bucket};
  return launchCount++;
}

size_t FusionPlanner::State::newBucket(size_t launch) {
  if (bucketCount == buckets.size()) buckets.emplace_back();
  buckets[bucketCount].launch = launch;
  buckets[bucketCount].bytes = 0;
  return bucketCount++;
}

FusionPlanner::State::CommPlan& FusionPlanner::State::commPlan(const weftComm* comm) {
  for (CommPlan& plan : comms) {
    if (plan.comm == comm) return plan;
  }
  return comms.emplace_back(CommPlan{comm});
}

const FusionSetting& FusionPlanner::State::setting(CommPlan& comm, size_t slot) {
  std::optional<FusionSetting>& setting = comm.settings.at(slot);
  if (!setting) setting = settingOf(comm.comm, slot);
  return *setting;
}

void FusionPlanner::State::close(size_t at) {
  launches[buckets[open[at].bucket].launch].closed = true;
  open[at] = std::move(open.back());
  open.pop_back();
}

void FusionPlanner::State::add(const HeldOp& call) {
  const size_t i = calls.size();
  calls.push_back(call);
  const Op& op = call.op;
  const Footprint footprint = footprintOf(op);
  std::optional<size_t> joined;
  std::optional<size_t> slot = slotOf(op.kind);
  CommPlan* plan = slot ? &commPlan(op.comm) : nullptr;  // every AllReduce has a slot
  const int index = op.kind == OpKind::AllReduce ? plan->allReduceIndex++ : 0;
  if (slot && op.fusionId != 0 && !op.members) {
    const FusionSetting& s = setting(*plan, *slot);
    const size_t bytes = fusionBytes(op);
    const bool bySize = s.mode == weftFusionAuto || s.mode == weftFusionSize;
    const size_t threshold = s.mode == weftFusionAuto ? kAutoFusionBytes : s.thresholdBytes;
    const int segment = static_cast<int>(std::upper_bound(s.splitIndices.begin(), s.splitIndices.end(), index) -
                                         s.splitIndices.begin());
    if (s.mode == weftFusionIndex) closeSegmentsBefore(op.comm, segment);
    BucketKey key{op.kind,
                  op.comm,
                  op.args.type,
                  op.args.op,
                  call.stream,
                  op.fusionId,
                  s.mode == weftFusionIndex ? segment : 0};
    if (s.mode != weftFusionOff && !(bySize && bytes > threshold)) {
      auto it = std::find_if(open.begin(), open.end(), [&](const OpenBucket& o) { return o.key == key; });
      size_t at = static_cast<size_t>(it - open.begin());
      if (it != open.end()) {
        const Bucket& b = buckets[it->bucket];
        if ((bySize && b.bytes + bytes > threshold) || !b.mayJoin(footprint)) {
          close(at);
        } else {
          joined = it->bucket;
        }
      }
      if (!joined) {
        joined = newBucket(newLaunch(false, true));
        at = open.size();
        open.push_back({key, *joined});
      }
      Bucket& b = buckets[*joined];
      members[b.launch].push_back(i);
      b.bytes += bytes;
      b.memberWrites.add(footprint.written);
      // Full: nothing more can join, so it may go now.
      if (bySize && b.bytes == threshold) close(at);
    }
  }
  if (!joined) members[newLaunch(true, false)].push_back(i);
  for (const OpenBucket& o : open) {
    if (joined && o.bucket == *joined) continue;
    buckets[o.bucket].laterReads.add(footprint.read);
    buckets[o.bucket].laterWrites.add(footprint.written);
  }
}

// Index mode: an AllReduce of a later segment closes the communicator's AllReduce buckets of the earlier
// ones (nothing can join them any more).
void FusionPlanner::State::closeSegmentsBefore(const weftComm* comm, int segment) {
  for (size_t at = open.size(); at-- > 0;) {  // downwards: close() moves the last entry, already seen, to `at`
    const BucketKey& key = open[at].key;
    if (std::get<OpKind>(key) == OpKind::AllReduce && std::get<const weftComm*>(key) == comm &&
        std::get<kSegment>(key) < segment) {
      close(at);
    }
  }
}

std::span<const std::vector<size_t>> FusionPlanner::takeReady() {
  State& s = *state_;
  const size_t from = s.taken;
  while (s.taken < s.launchCount && s.launches[s.taken].closed && s.launches[s.taken].bucket) ++s.taken;
  return {s.members.data() + from, s.taken - from};
}

std::span<const std::vector<size_t>> FusionPlanner::takeAll() {
  State& s = *state_;
  const size_t from = s.taken;
  s.taken = s.launchCount;
  s.open.clear();
  return {s.members.data() + from, s.taken - from};
}

// A spare list that no operation holds any more (its count is ours alone: nobody can take it meanwhile),
// else a new one, kept as a spare while there are few.
std::shared_ptr<std::vector<Op>> FusionPlanner::State::memberList() {
  for (const std::shared_ptr<std::vector<Op>>& spare : spareMembers) {
    if (spare.use_count() != 1) continue;  // a relaxed look
    // The last holder released it (an acq_rel decrement) on whichever thread ran it. The copy returned is an
    // acq_rel increment of the same count, so it orders that thread's last reads before our writes; an
    // acquire fence after the look would too, but ThreadSanitizer does not model fences and reported a race.
    std::shared_ptr<std::vector<Op>> list = spare;
    list->clear();
    return list;
  }
  auto list = std::make_shared<std::vector<Op>>();
  if (spareMembers.size() < kSpareMemberLists) spareMembers.push_back(list);
  return list;
}

HeldOp FusionPlanner::launchOf(std::span<const size_t> members) {
  const std::vector<HeldOp>& calls = state_->calls;
  const HeldOp& first = calls[members.front()];
  if (members.size() == 1) return first;
  std::shared_ptr<std::vector<Op>> fused = state_->memberList();
  fused->reserve(members.size());
  HeldOp launch = first;
  launch.op.args.sendbuff = nullptr;
  launch.op.args.recvbuff = nullptr;
  launch.op.args.count = 0;
  for (size_t i : members) {
    fused->push_back(calls[i].op);
    launch.op.args.count += calls[i].op.args.count;
  }
  launch.op.members = std::move(fused);
  return launch;
}

std::vector<std::vector<size_t>> planFusion(std::span<const HeldOp> held, const FusionSettingOf& settingOf) {
  FusionPlanner planner(settingOf);
  for (const HeldOp& h : held) planner.add(h);
  std::span<const std::vector<size_t>> launches = planner.takeAll();
  return {launches.begin(), launches.end()};
}

}  // namespace weft
