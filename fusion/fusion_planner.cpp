#include "fusion/fusion_planner.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "core/comm/comm.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {

// Half-open byte range [begin, end) of one buffer.
struct Range {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool overlaps(const Range& other) const { return begin < other.end && other.begin < end; }
};

Range rangeOf(const void* buffer, size_t bytes) {
  auto begin = reinterpret_cast<uintptr_t>(buffer);
  return buffer == nullptr || bytes == 0 ? Range{} : Range{begin, begin + bytes};
}

// The memory an operation reads and writes (every rank's view is conservative: a Broadcast's
// non-roots are counted as reading their send buffer too).
struct Footprint {
  Range read;
  Range written;
};

Footprint footprintOf(const Op& op) {
  const CollArgs& a = op.args;
  const size_t bytes = a.count * dataTypeSize(a.type);
  const size_t all = bytes * static_cast<size_t>(op.comm->nranks);
  switch (op.kind) {
    case OpKind::AllGather:
      return {rangeOf(a.sendbuff, bytes), rangeOf(a.recvbuff, all)};
    case OpKind::ReduceScatter:
      return {rangeOf(a.sendbuff, all), rangeOf(a.recvbuff, bytes)};
    case OpKind::AllToAll:
      return {rangeOf(a.sendbuff, all), rangeOf(a.recvbuff, all)};
    case OpKind::Barrier:
      return {};
    default:
      return {rangeOf(a.sendbuff, bytes), rangeOf(a.recvbuff, bytes)};
  }
}

// A union of ranges, merged, so that asking about one range costs O(log n) however many were added (a
// bucket of a thousand gradients is checked a thousand times).
class RangeSet {
 public:
  void add(Range r) {
    if (r.begin == r.end) return;
    auto it = spans_.upper_bound(r.begin);
    if (it != spans_.begin() && std::prev(it)->second >= r.begin) --it;  // the span before touches r
    while (it != spans_.end() && it->first <= r.end) {
      r.begin = std::min(r.begin, it->first);
      r.end = std::max(r.end, it->second);
      it = spans_.erase(it);
    }
    spans_.emplace(r.begin, r.end);
  }
  bool overlaps(const Range& r) const {
    if (r.begin == r.end) return false;
    auto it = spans_.lower_bound(r.end);  // first span starting at or after r's end: no overlap
    return it != spans_.begin() && std::prev(it)->second > r.begin;
  }

 private:
  std::map<uintptr_t, uintptr_t> spans_;  // begin -> end, disjoint
};

// What makes operations compatible; segment is the Index mode's.
using Key = std::tuple<OpKind, const weftComm*, weftDataType_t, weftRedOp_t, const weftStream*, int, int>;

struct Bucket {
  size_t group = 0;  // index of its group in the plan
  size_t bytes = 0;
  RangeSet memberWrites;
  // Memory touched by operations issued since the bucket opened that did not join it.
  RangeSet laterReads;
  RangeSet laterWrites;

  // Whether an operation with footprint f may run at the bucket's place instead of its own.
  bool mayJoin(const Footprint& f) const {
    return !memberWrites.overlaps(f.read) && !memberWrites.overlaps(f.written) && !laterWrites.overlaps(f.read) &&
           !laterWrites.overlaps(f.written) && !laterReads.overlaps(f.written);
  }
};

// Settings looked up once per communicator and collective per group.
class SettingCache {
 public:
  explicit SettingCache(const FusionSettingOf& settingOf) : settingOf_(settingOf) {}
  const FusionSetting& get(const weftComm* comm, size_t slot) {
    auto key = std::make_pair(comm, slot);
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, settingOf_(comm, slot)).first;
    return it->second;
  }

 private:
  const FusionSettingOf& settingOf_;
  std::map<std::pair<const weftComm*, size_t>, FusionSetting> cache_;
};

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

}  // namespace

size_t fusionBytes(const Op& op) {
  size_t bytes = op.args.count * dataTypeSize(op.args.type);
  return op.kind == OpKind::ReduceScatter ? bytes * static_cast<size_t>(op.comm->nranks) : bytes;
}

std::vector<std::vector<size_t>> planFusion(std::span<const HeldOp> held, const FusionSettingOf& settingOf) {
  SettingCache settings(settingOf);
  std::vector<std::vector<size_t>> plan;
  std::vector<Bucket> buckets;
  std::map<Key, size_t> openBucket;               // key -> index into buckets
  std::map<const weftComm*, int> allReduceIndex;  // Index mode's op counter

  for (size_t i = 0; i < held.size(); ++i) {
    const Op& op = held[i].op;
    const Footprint footprint = footprintOf(op);
    std::optional<size_t> joined;
    std::optional<size_t> slot = slotOf(op.kind);
    int index = op.kind == OpKind::AllReduce ? allReduceIndex[op.comm]++ : 0;
    if (slot && op.fusionId != 0 && !op.members) {
      const FusionSetting& setting = settings.get(op.comm, *slot);
      const size_t bytes = fusionBytes(op);
      const bool bySize = setting.mode == weftFusionAuto || setting.mode == weftFusionSize;
      const size_t threshold = setting.mode == weftFusionAuto ? kAutoFusionBytes : setting.thresholdBytes;
      int segment =
          static_cast<int>(std::upper_bound(setting.splitIndices.begin(), setting.splitIndices.end(), index) -
                           setting.splitIndices.begin());
      Key key{op.kind,
              op.comm,
              op.args.type,
              op.args.op,
              held[i].stream,
              op.fusionId,
              setting.mode == weftFusionIndex ? segment : 0};
      if (setting.mode != weftFusionOff && !(bySize && bytes > threshold)) {
        auto it = openBucket.find(key);
        if (it != openBucket.end()) {
          const Bucket& b = buckets[it->second];
          if ((bySize && b.bytes + bytes > threshold) || !b.mayJoin(footprint)) {
            openBucket.erase(it);
          } else {
            joined = it->second;
          }
        }
        if (!joined) {
          joined = buckets.size();
          buckets.emplace_back().group = plan.size();
          plan.emplace_back();
          openBucket[key] = *joined;
        }
        Bucket& b = buckets[*joined];
        plan[b.group].push_back(i);
        b.bytes += bytes;
        b.memberWrites.add(footprint.written);
      }
    }
    if (!joined) plan.push_back({i});
    for (const auto& [key, b] : openBucket) {
      if (joined && b == *joined) continue;
      buckets[b].laterReads.add(footprint.read);
      buckets[b].laterWrites.add(footprint.written);
    }
  }
  return plan;
}

std::vector<HeldOp> fuseGroup(std::span<const HeldOp> held, const FusionSettingOf& settingOf) {
  std::vector<HeldOp> launches;
  for (const std::vector<size_t>& group : planFusion(held, settingOf)) {
    const HeldOp& first = held[group.front()];
    if (group.size() == 1) {
      launches.push_back(first);
      continue;
    }
    auto members = std::make_shared<std::vector<Op>>();
    Op fused = first.op;
    fused.args.sendbuff = nullptr;
    fused.args.recvbuff = nullptr;
    fused.args.count = 0;
    for (size_t i : group) {
      members->push_back(held[i].op);
      fused.args.count += held[i].op.args.count;
    }
    fused.members = std::move(members);
    launches.push_back({std::move(fused), first.stream});
  }
  return launches;
}

}  // namespace weft
