// A heap buffer with guard bytes before and after, so writes outside the span a call may touch show up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace colltest {

class GuardedBuffer {
 public:
  static constexpr size_t kGuardBytes = 64;
  static constexpr uint8_t kPoison = 0xCD;  // initial content of the data span

  void allocate(size_t bytes);
  bool allocated() const { return !storage_.empty(); }
  uint8_t* data() { return storage_.data() + kGuardBytes; }
  const uint8_t* data() const { return storage_.data() + kGuardBytes; }
  size_t bytes() const { return bytes_; }
  // Offset (negative: before the data, >= bytes(): after) of the first changed guard byte.
  bool guardsIntact(long long* badOffset) const;

 private:
  static uint8_t guardByte(size_t i) { return static_cast<uint8_t>(0xA5 ^ (i * 7)); }
  std::vector<uint8_t> storage_;
  size_t bytes_ = 0;
};

}  // namespace colltest
