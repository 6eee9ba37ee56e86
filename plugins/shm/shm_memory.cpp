#include "shm_memory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>

#include "shm_segment.h"

namespace weft::shm {
namespace {

struct Allocation {
  Mapping mapping;
  int fd;
  uint64_t inode;
};

std::mutex registryMutex;
std::atomic<size_t> liveCount{0};
std::atomic<uint64_t> releaseCount{0};

// By base address. Leaked on purpose: buffers may be freed from static destructors of the application.
std::map<uint64_t, Allocation>& registry() {
  static auto* all = new std::map<uint64_t, Allocation>();
  return *all;
}

size_t pageRounded(size_t bytes) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

}  // namespace

bool sharedAllocate(size_t size, void** ptr, std::string* error) {
  if (size == 0 || size > (size_t{1} << 50)) {
    *error = "cannot allocate " + std::to_string(size) + " bytes";
    return false;
  }
  Mapping mapping;
  const size_t bytes = pageRounded(size);
  int fd = createSegment("weft-mem", bytes, &mapping, error);
  if (fd < 0) return false;
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    close(fd);
    *error = "fstat of the new memfd failed";
    return false;
  }
  *ptr = mapping.data();
  const auto base = reinterpret_cast<uint64_t>(mapping.data());
  std::lock_guard<std::mutex> lock(registryMutex);
  registry().emplace(base, Allocation{std::move(mapping), fd, static_cast<uint64_t>(st.st_ino)});
  liveCount.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool sharedRelease(void* ptr, std::string* error) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = registry().find(reinterpret_cast<uint64_t>(ptr));
  if (it == registry().end()) {
    *error = "not an allocation of this plugin";
    return false;
  }
  close(it->second.fd);
  registry().erase(it);  // unmaps
  liveCount.fetch_sub(1, std::memory_order_relaxed);
  releaseCount.fetch_add(1, std::memory_order_release);
  return true;
}

bool anySharedRegions() { return liveCount.load(std::memory_order_relaxed) > 0; }

uint64_t sharedReleases() { return releaseCount.load(std::memory_order_acquire); }

bool findSharedRegion(uint64_t address, size_t bytes, SharedRegion* region) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = registry().upper_bound(address);
  if (it == registry().begin()) return false;
  --it;
  const uint64_t base = it->first;
  const uint64_t size = it->second.mapping.size();
  if (address + bytes > base + size) return false;
  *region = SharedRegion{base, size, it->second.inode, it->second.fd, 0};
  return true;
}

bool sharedRegionLive(const SharedRegion& region) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = registry().find(region.base);
  return it != registry().end() && it->second.inode == region.inode && it->second.mapping.size() == region.bytes;
}

// The plugin's memory extension (weftMemoryOps_v1): the allocations above, errors as sentences.
namespace {

weftResult_t memoryAlloc(void* /*ctx*/, size_t size, void** ptr, char* message, size_t messageBytes) {
  if (ptr == nullptr) return weftInvalidArgument;
  std::string error;
  if (sharedAllocate(size, ptr, &error)) return weftSuccess;
  if (message != nullptr && messageBytes > 0) std::snprintf(message, messageBytes, "%s", error.c_str());
  return weftSystemError;
}

weftResult_t memoryFree(void* /*ctx*/, void* ptr, char* message, size_t messageBytes) {
  std::string error;
  if (sharedRelease(ptr, &error)) return weftSuccess;
  if (message != nullptr && messageBytes > 0) std::snprintf(message, messageBytes, "%s", error.c_str());
  return weftInvalidArgument;
}

}  // namespace
}  // namespace weft::shm

extern "C" {
extern WEFT_API const weftMemoryOps_v1 weftMemory_v1;
}

const weftMemoryOps_v1 weftMemory_v1 = {
    .abiVersion = 1, .alloc = weft::shm::memoryAlloc, .free = weft::shm::memoryFree};
