// The memory a call reads and writes, as weft.h documents its buffers, and unions of such ranges: what fusion
// (fusion/fusion_planner.h) and plans (fusion/plan_program.h) check dependencies between calls with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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
// bucket of a thousand gradients is checked a thousand times). The spans lie sorted in one array with room
// kept below and above them: a group's calls usually come in ascending or descending address order (a
// backward pass issues gradients in the reverse order of their allocation), so a new span usually goes at
// one end, in O(1) and without allocating once the set has held as many. clear() keeps the array.
class RangeSet {
 public:
  void add(Range r);
  bool overlaps(const Range& r) const;
  void clear();

 private:
  Range* begin() { return storage_.data() + first_; }
  Range* end() { return storage_.data() + last_; }
  const Range* begin() const { return storage_.data() + first_; }
  const Range* end() const { return storage_.data() + last_; }
  // Puts r before the span at `at` (0 to size), moving the spans on the shorter side by one.
  void insertAt(size_t at, Range r);
  // Reallocates (or re-centres) the spans with room on both sides for `spans` more than they number.
  void recentre(size_t spans);

  std::vector<Range> storage_;
  size_t first_ = 0;  // the spans are storage_[first_, last_): disjoint, sorted, none touching the next
  size_t last_ = 0;
};

}  // namespace weft
