#include "fusion/fusion_planner.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "core/comm/comm.h"
#include "core/reduce/reduce.h"
#include "fusion/footprint.h"

namespace weft {
namespace {

// What makes operations compatible; segment is the Index mode's.
using BucketKey = std::tuple<OpKind, const weftComm*, weftDataType_t, weftRedOp_t, const weftStream*, int, int>;
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

}  // namespace

size_t fusionBytes(const Op& op) {
  size_t bytes = op.args.count * dataTypeSize(op.args.type);
  return op.kind == OpKind::ReduceScatter ? bytes * static_cast<size_t>(op.comm->nranks) : bytes;
}

// One launch: a bucket's calls (indices in issue order), or a call that does not fuse.
struct Launch {
  std::vector<size_t> members;
  bool closed;  // nothing can join it any more
  // Only buckets go before the group's end: Send/Recv must start together with the rest of the group,
  // and a call that does not fuse gains nothing by going alone on another thread.
  bool bucket;
};

struct FusionPlanner::State {
  explicit State(FusionSettingOf of) : settingOf(std::move(of)) {}

  FusionSettingOf settingOf;
  std::map<std::pair<const weftComm*, size_t>, FusionSetting> settings;  // looked up once per group
  std::vector<HeldOp> calls;
  std::deque<Launch> launches;  // not taken yet, in launch order
  size_t taken = 0;             // launches taken so far: launch numbers count from the group's start
  std::vector<Bucket> buckets;
  std::map<BucketKey, size_t> open;               // key -> bucket that calls may still join
  std::map<const weftComm*, int> allReduceIndex;  // Index mode's op counter

  const FusionSetting& setting(const weftComm* comm, size_t slot);
  Launch& launchOfBucket(size_t bucket) { return launches[buckets[bucket].launch - taken]; }
  void close(std::map<BucketKey, size_t>::iterator bucket);
  void closeSegmentsBefore(const weftComm* comm, int segment);
  void add(const HeldOp& call);
};

FusionPlanner::FusionPlanner(FusionSettingOf settingOf) : state_(std::make_unique<State>(std::move(settingOf))) {}
FusionPlanner::~FusionPlanner() = default;
void FusionPlanner::add(const HeldOp& call) { state_->add(call); }

const FusionSetting& FusionPlanner::State::setting(const weftComm* comm, size_t slot) {
  auto key = std::make_pair(comm, slot);
  auto it = settings.find(key);
  if (it == settings.end()) it = settings.emplace(key, settingOf(comm, slot)).first;
  return it->second;
}

void FusionPlanner::State::close(std::map<BucketKey, size_t>::iterator bucket) {
  launchOfBucket(bucket->second).closed = true;
  open.erase(bucket);
}

void FusionPlanner::State::add(const HeldOp& call) {
  const size_t i = calls.size();
  calls.push_back(call);
  const Op& op = call.op;
  const Footprint footprint = footprintOf(op);
  std::optional<size_t> joined;
  std::optional<size_t> slot = slotOf(op.kind);
  int index = op.kind == OpKind::AllReduce ? allReduceIndex[op.comm]++ : 0;
  if (slot && op.fusionId != 0 && !op.members) {
    const FusionSetting& s = setting(op.comm, *slot);
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
      auto it = open.find(key);
      if (it != open.end()) {
        const Bucket& b = buckets[it->second];
        if ((bySize && b.bytes + bytes > threshold) || !b.mayJoin(footprint)) {
          close(it);
        } else {
          joined = it->second;
        }
      }
      if (!joined) {
        joined = buckets.size();
        buckets.emplace_back().launch = taken + launches.size();
        launches.push_back(Launch{{}, false, true});
        open[key] = *joined;
      }
      Bucket& b = buckets[*joined];
      launchOfBucket(*joined).members.push_back(i);
      b.bytes += bytes;
      b.memberWrites.add(footprint.written);
      // Full: nothing more can join, so it may go now.
      if (bySize && b.bytes == threshold) close(open.find(key));
    }
  }
  if (!joined) launches.push_back(Launch{{i}, true, false});
  for (const auto& [key, b] : open) {
    if (joined && b == *joined) continue;
    buckets[b].laterReads.add(footprint.read);
    buckets[b].laterWrites.add(footprint.written);
  }
}

// Index mode: an AllReduce of a later segment closes the communicator's AllReduce buckets of the earlier
// ones (nothing can join them any more).
void FusionPlanner::State::closeSegmentsBefore(const weftComm* comm, int segment) {
  for (auto it = open.begin(); it != open.end();) {
    auto next = std::next(it);
    if (std::get<OpKind>(it->first) == OpKind::AllReduce && std::get<const weftComm*>(it->first) == comm &&
        std::get<kSegment>(it->first) < segment) {
      close(it);
    }
    it = next;
  }
}

std::vector<std::vector<size_t>> FusionPlanner::takeReady() {
  std::vector<std::vector<size_t>> ready;
  auto& launches = state_->launches;
  while (!launches.empty() && launches.front().closed && launches.front().bucket) {
    ready.push_back(std::move(launches.front().members));
    launches.pop_front();
    ++state_->taken;
  }
  return ready;
}

std::vector<std::vector<size_t>> FusionPlanner::takeAll() {
  std::vector<std::vector<size_t>> all;
  for (Launch& l : state_->launches) all.push_back(std::move(l.members));
  state_->taken += state_->launches.size();
  state_->launches.clear();
  state_->open.clear();
  return all;
}

HeldOp FusionPlanner::launchOf(const std::vector<size_t>& members) const {
  const std::vector<HeldOp>& calls = state_->calls;
  const HeldOp& first = calls[members.front()];
  if (members.size() == 1) return first;
  auto fused = std::make_shared<std::vector<Op>>();
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
  return planner.takeAll();
}

}  // namespace weft
