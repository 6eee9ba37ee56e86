#include "fusion/footprint.h"

#include <algorithm>
#include <iterator>

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
  auto it = spans_.upper_bound(r.begin);
  if (it != spans_.begin() && std::prev(it)->second >= r.begin) --it;  // the span before touches r
  while (it != spans_.end() && it->first <= r.end) {
    r.begin = std::min(r.begin, it->first);
    r.end = std::max(r.end, it->second);
    it = spans_.erase(it);
  }
  spans_.emplace(r.begin, r.end);
}

bool RangeSet::overlaps(const Range& r) const {
  if (r.begin == r.end) return false;
  auto it = spans_.lower_bound(r.end);  // first span starting at or after r's end: no overlap
  return it != spans_.begin() && std::prev(it)->second > r.begin;
}

}  // namespace weft
