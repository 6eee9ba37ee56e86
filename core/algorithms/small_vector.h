// A vector whose first N elements live inside it: algorithms keep their per-call lists (requests, tree
// children, block starts) here, so a collective in steady state allocates nothing, and a list that grows
// past N moves to the heap rather than failing. For small, trivially copyable element types.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace weft {

template <typename T, size_t N>
class SmallVector {
 public:
  using value_type = T;  // for std::back_inserter

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return heap_.empty() ? inline_.data() : heap_.data(); }
  const T* data() const { return heap_.empty() ? inline_.data() : heap_.data(); }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  std::span<T> span() { return {data(), size_}; }

  void push_back(const T& value) {
    if (heap_.empty() && size_ < N) {
      inline_[size_++] = value;
      return;
    }
    spill();
    heap_.push_back(value);
    ++size_;
  }
  // n value-initialised elements.
  void assign(size_t n) {
    clear();
    if (n <= N) {
      std::fill(inline_.begin(), inline_.begin() + static_cast<std::ptrdiff_t>(n), T{});
    } else {
      heap_.assign(n, T{});
    }
    size_ = n;
  }
  void clear() {
    heap_.clear();
    size_ = 0;
  }

 private:
  void spill() {
    if (heap_.empty()) heap_.assign(inline_.begin(), inline_.begin() + static_cast<std::ptrdiff_t>(size_));
  }

  std::array<T, N> inline_{};
  std::vector<T> heap_;  // holds every element once there are more than N
  size_t size_ = 0;
};

}  // namespace weft
