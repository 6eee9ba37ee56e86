// A buffer with guard bytes before and after, so writes outside the span a call may touch show up. From the
// heap, or from weftMemAlloc (guards included) after useWeftMemory(true).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace colltest {

// Frees a GuardedBuffer's storage the way it was allocated.
struct GuardedStorageRelease {
  bool weftMemory = false;
  void operator()(uint8_t* storage) const;
};

class GuardedBuffer {
 public:
  static constexpr size_t kGuardBytes = 64;
  static constexpr uint8_t kPoison = 0xCD;  // initial content of the data span

  // Where the buffers allocated from now on come from (--memory weft): weftMemAlloc, or the heap. Exits the
  // process with a message when weftMemAlloc fails.
  static void useWeftMemory(bool on);
  // How many bytes past an aligned address the data spans allocated from now on start (--misalign): a
  // float or double buffer at an odd address is legal for a void* API, and the kernels must not assume
  // element alignment.
  static void misalignBy(size_t bytes);

  void allocate(size_t bytes);
  bool allocated() const { return storage_ != nullptr; }
  uint8_t* data() { return storage_.get() + lead_; }
  const uint8_t* data() const { return storage_.get() + lead_; }
  size_t bytes() const { return bytes_; }
  // Offset (negative: before the data, >= bytes(): after) of the first changed guard byte.
  bool guardsIntact(long long* badOffset) const;

 private:
  static uint8_t guardByte(size_t i) { return static_cast<uint8_t>(0xA5 ^ (i * 7)); }
  std::unique_ptr<uint8_t[], GuardedStorageRelease> storage_;
  size_t bytes_ = 0;
  size_t lead_ = kGuardBytes;  // guard bytes before the data, kGuardBytes plus the misalignment
};

}  // namespace colltest
