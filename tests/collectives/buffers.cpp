#include "buffers.h"

#include <cstring>

namespace colltest {

void GuardedBuffer::allocate(size_t bytes) {
  bytes_ = bytes;
  storage_.assign(bytes + 2 * kGuardBytes, kPoison);
  for (size_t i = 0; i < kGuardBytes; ++i) {
    storage_[i] = guardByte(i);
    storage_[kGuardBytes + bytes + i] = guardByte(i + kGuardBytes);
  }
}

bool GuardedBuffer::guardsIntact(long long* badOffset) const {
  if (storage_.empty()) return true;
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (storage_[i] != guardByte(i)) {
      *badOffset = static_cast<long long>(i) - static_cast<long long>(kGuardBytes);
      return false;
    }
    if (storage_[kGuardBytes + bytes_ + i] != guardByte(i + kGuardBytes)) {
      *badOffset = static_cast<long long>(bytes_ + i);
      return false;
    }
  }
  return true;
}

}  // namespace colltest
