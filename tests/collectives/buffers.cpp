#include "buffers.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "weft/weft.h"

namespace colltest {
namespace {

bool weftMemoryOn = false;

}  // namespace

void GuardedBuffer::useWeftMemory(bool on) { weftMemoryOn = on; }

void GuardedStorageRelease::operator()(uint8_t* storage) const {
  if (!weftMemory) {
    delete[] storage;
  } else if (weftMemFree(storage) != weftSuccess) {
    std::fprintf(stderr, "weftMemFree failed: %s\n", weftGetLastErrorMessage());
    std::abort();
  }
}

void GuardedBuffer::allocate(size_t bytes) {
  bytes_ = bytes;
  const size_t total = bytes + 2 * kGuardBytes;
  storage_.reset();
  if (weftMemoryOn) {
    void* memory = nullptr;
    if (weftMemAlloc(&memory, total) != weftSuccess) {
      std::fprintf(stderr, "weftMemAlloc(%zu) failed: %s\n", total, weftGetLastErrorMessage());
      std::exit(1);
    }
    storage_ = std::unique_ptr<uint8_t[], GuardedStorageRelease>(static_cast<uint8_t*>(memory),
                                                                 GuardedStorageRelease{true});
  } else {
    storage_ = std::unique_ptr<uint8_t[], GuardedStorageRelease>(new uint8_t[total], GuardedStorageRelease{false});
  }
  std::memset(storage_.get(), kPoison, total);
  for (size_t i = 0; i < kGuardBytes; ++i) {
    storage_[i] = guardByte(i);
    storage_[kGuardBytes + bytes + i] = guardByte(i + kGuardBytes);
  }
}

bool GuardedBuffer::guardsIntact(long long* badOffset) const {
  if (storage_ == nullptr) return true;
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
