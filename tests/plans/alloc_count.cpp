// The program's operator new and delete, counting allocations while a CountAllocations lives.
#include "alloc_count.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
std::atomic<int> gCounting{0};
std::atomic<uint64_t> gAllocations{0};

void* allocate(std::size_t bytes, std::size_t alignment) {
  if (gCounting.load(std::memory_order_relaxed) > 0) gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (bytes == 0) bytes = 1;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(bytes);
  } else if (posix_memalign(&p, alignment, bytes) != 0) {
    p = nullptr;
  }
  return p;
}
}  // namespace

namespace plantest {
CountAllocations::CountAllocations() : start_(gAllocations.load()) { gCounting.fetch_add(1); }
CountAllocations::~CountAllocations() { gCounting.fetch_sub(1); }
uint64_t CountAllocations::count() const { return gAllocations.load() - start_; }
}  // namespace plantest

void* operator new(std::size_t bytes) {
  void* p = allocate(bytes, alignof(std::max_align_t));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  void* p = allocate(bytes, static_cast<std::size_t>(alignment));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t bytes, std::align_val_t alignment) { return operator new(bytes, alignment); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  return allocate(bytes, alignof(std::max_align_t));
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  return allocate(bytes, alignof(std::max_align_t));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
