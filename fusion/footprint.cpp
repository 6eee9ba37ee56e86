#include "fusion/footprint.h"

#include <algorithm>
#include <cstddef>

#include "core/comm/comm.h"
#include "core/reduce/reduce.h"

namespace weft {

Range rangeOf(const void* buffer, size_t bytes) {
  auto begin = reinterpret_cast<uintptr_t>(buffer);
  return buffer == nullptr || bytes == 0 ? Range{} : Range{begin, begin + bytes};
}

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

void RangeSet::add(Range r) {
  if (r.begin == r.end) return;
  if (first_ == last_ || r.begin > end()[-1].end) return insertAt(last_ - first_, r);  // the usual case
  // The spans that r overlaps or touches: [from, to).
  Range* from = std::lower_bound(begin(), end(), r.begin, [](const Range& s, uintptr_t b) { return s.end < b; });
  Range* to = std::upper_bound(from, end(), r.end, [](uintptr_t e, const Range& s) { return e < s.begin; });
  if (from == to) return insertAt(static_cast<size_t>(from - begin()), r);
  *from = {std::min(r.begin, from->begin), std::max(r.end, (to - 1)->end)};
  // Merging is rare (calls' buffers are usually apart): the spans after `to` move down.
  const Range* kept = std::copy(to, end(), from + 1);
  last_ = first_ + static_cast<size_t>(kept - begin());
}

void RangeSet::insertAt(size_t at, Range r) {
  const size_t count = last_ - first_;
  const bool moveLower = at < count - at;
  if ((moveLower && first_ == 0) || (!moveLower && last_ == storage_.size())) recentre(1);
  Range* slot = begin() + at;
  if (moveLower) {
    std::copy(begin(), slot, begin() - 1);
    --first_;
    --slot;
  } else {
    std::copy_backward(slot, end(), end() + 1);
    ++last_;
  }
  *slot = r;
}

void RangeSet::recentre(size_t spans) {
  const size_t count = last_ - first_;
  // Room on each side for more spans than it holds: the next recentring is as many additions away as this one
  // moves spans, so adding at one end costs O(1) amortised.
  const size_t capacity = std::max(storage_.size(), 3 * (count + spans) + 16);
  const size_t newFirst = (capacity - count) / 2;
  if (capacity == storage_.size()) {
    Range* to = storage_.data() + newFirst;
    if (newFirst < first_) {
      std::copy(begin(), end(), to);
    } else {
      std::copy_backward(begin(), end(), to + count);
    }
  } else {
    std::vector<Range> grown(capacity);
    std::copy(begin(), end(), grown.data() + newFirst);
    storage_.swap(grown);
  }
  first_ = newFirst;
  last_ = newFirst + count;
}

void RangeSet::clear() { first_ = last_ = storage_.size() / 2; }

bool RangeSet::overlaps(const Range& r) const {
  if (r.begin == r.end || first_ == last_ || r.end <= begin()->begin || r.begin >= end()[-1].end) return false;
  // The first span ending after r begins; r overlaps it if it starts before r ends.
  const Range* it =
      std::upper_bound(begin(), end(), r.begin, [](uintptr_t b, const Range& s) { return b < s.end; });
  return it != end() && it->begin < r.end;
}

}  // namespace weft
