// The memory a call reads and writes, as weft.h documents its buffers, and unions of such ranges: what fusion
// (fusion/fusion_planner.h) and plans (fusion/plan_program.h) check dependencies between calls with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory_resource>

#include "core/collectives/op.h"

namespace weft {

// Half-open byte range [begin, end) of one buffer.
struct Range {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool overlaps(const Range& other) const { return begin < other.end && other.begin < end; }
};

Range rangeOf(const void* buffer, size_t bytes);

// The memory an operation reads and writes (every rank's view is conservative: a Broadcast's
// non-roots are counted as reading their send buffer too).
struct Footprint {
  Range read;
  Range written;
};

// One call's (not a fused operation's: see its members).
Footprint footprintOf(const Op& op);

// A union of ranges, merged, so that asking about one range costs O(log n) however many were added (a
// bucket of a thousand gradients is checked a thousand times).
class RangeSet {
 public:
  // Its spans' nodes come from `memory` (the fusion planner keeps them in a pool from group to group).
  explicit RangeSet(std::pmr::memory_resource* memory = std::pmr::get_default_resource()) : spans_(memory) {}
  void add(Range r);
  bool overlaps(const Range& r) const;
  void clear() { spans_.clear(); }

 private:
  std::pmr::map<uintptr_t, uintptr_t> spans_;  // begin -> end, disjoint
};

}  // namespace weft
