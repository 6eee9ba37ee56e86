// Heap bytes a vector holds (its capacity), for the resource counts that plans report.
#pragma once

#include <cstddef>
#include <iterator>
#include <numeric>

namespace weft {

template <typename Vector>
size_t capacityBytes(const Vector& v) {
  return v.capacity() *
         sizeof(typename Vector::value_type);  // NOLINT(bugprone-sizeof-expression): of pointers too
}

// The capacities of a range of vectors, summed.
template <typename Range>
size_t summedCapacityBytes(const Range& vectors) {
  return std::accumulate(std::begin(vectors), std::end(vectors), size_t{0},
                         [](size_t sum, const auto& v) { return sum + capacityBytes(v); });
}

}  // namespace weft
