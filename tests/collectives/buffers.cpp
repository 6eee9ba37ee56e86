#include "buffers.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "weft/weft.h"

namespace colltest {
namespace {

bool weftMemoryOn = false;
size_t misalignment = 0;

}  // namespace

void GuardedBuffer::useWeftMemory(bool on) { weftMemoryOn = on; }
void GuardedBuffer::misalignBy(size_t bytes) { misalignment = bytes; }

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
  lead_ = kGuardBytes + misalignment;
  const size_t total = lead_ + bytes + kGuardBytes;
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
  for (size_t i = 0; i < lead_; ++i) storage_[i] = guardByte(i);
  for (size_t i = 0; i < kGuardBytes; ++i) storage_[lead_ + bytes + i] = guardByte(lead_ + i);
}

bool GuardedBuffer::guardsIntact(long long* badOffset) const {
  if (storage_ == nullptr) return true;
  for (size_t i = 0; i < lead_; ++i) {
    if (storage_[i] != guardByte(i)) {
      *badOffset = static_cast<long long>(i) - static_cast<long long>(lead_);
      return false;
    }
  }
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (storage_[lead_ + bytes_ + i] != guardByte(lead_ + i)) {
      *badOffset = static_cast<long long>(bytes_) + static_cast<long long>(i);
      return false;
    }
  }
  return true;
}

}  // namespace colltest
