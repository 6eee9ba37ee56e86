// The program's operator new and delete, counting allocations while a CountAllocations lives, and keeping
// the call stack of the first one counted so that a test can say what allocated.
#include "alloc_count.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace {
std::atomic<int> gCounting{0};
std::atomic<uint64_t> gAllocations{0};
uint64_t gStart = 0;  // gAllocations when the current scope began

// The first counted allocation's stack: written once per scope by the thread that wins `gCaptured`.
constexpr int kMaxFrames = 32;
void* gFrames[kMaxFrames];
int gFrameCount = 0;
bool gOnCountingThread = false;
pthread_t gCountingThread;
std::atomic<bool> gCaptured{false};

void* allocate(std::size_t bytes, std::size_t alignment) {
  if (gCounting.load(std::memory_order_relaxed) > 0) {
    gAllocations.fetch_add(1, std::memory_order_relaxed);
    if (!gCaptured.exchange(true)) {
      gFrameCount = backtrace(gFrames, kMaxFrames);  // warmed up by the constructor: allocates nothing now
      gOnCountingThread = pthread_equal(pthread_self(), gCountingThread) != 0;
    }
  }
  if (bytes == 0) bytes = 1;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(bytes);
  } else if (posix_memalign(&p, alignment, bytes) != 0) {
    p = nullptr;
  }
  return p;
}

// "function at file:line" from addr2line (binutils), which reads the symbols libweft's hidden visibility keeps
// from dladdr; empty when it cannot say.
std::string symbolize(const char* module, uintptr_t offset) {
  char command[4096];
  std::snprintf(command, sizeof(command), "addr2line -C -f -p -e '%s' 0x%llx 2>/dev/null", module,
                static_cast<unsigned long long>(offset));
  FILE* pipe = popen(command, "r");
  if (pipe == nullptr) return "";
  char line[1024] = "";
  const bool got = std::fgets(line, sizeof(line), pipe) != nullptr;
  pclose(pipe);
  std::string text = got ? line : "";
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.rfind("??", 0) == 0 ? "" : text;
}

std::string describeFrame(void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "  ?\n";
  // The return address points after the call: one byte back lies inside it.
  const auto offset = reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(info.dli_fbase) - 1;
  char where[64];
  std::snprintf(where, sizeof(where), " +0x%llx ", static_cast<unsigned long long>(offset));
  const std::string symbol = symbolize(info.dli_fname, offset);
  return "  " + std::string(info.dli_fname) + where + (symbol.empty() ? "" : symbol) + "\n";
}
}  // namespace

namespace plantest {
CountAllocations::CountAllocations() {
  void* warm[2];
  backtrace(warm, 2);  // its first call loads the unwinder, which allocates
  gCountingThread = pthread_self();
  gCaptured.store(false);
  gStart = gAllocations.load();
  gCounting.fetch_add(1);
}
CountAllocations::~CountAllocations() { gCounting.fetch_sub(1); }
uint64_t CountAllocations::count() const { return gAllocations.load() - gStart; }

std::string firstCountedAllocation() {
  if (!gCaptured.load()) return "";
  std::string out = gOnCountingThread ? "first one on the counting thread:\n" : "first one on another thread:\n";
  for (int i = 1; i < gFrameCount; ++i) out += describeFrame(gFrames[i]);  // frame 0 is allocate() itself
  return out;
}
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
