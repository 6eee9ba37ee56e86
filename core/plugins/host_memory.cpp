#include "core/plugins/host_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "core/common/error.h"
#include "core/common/log.h"
#include "core/plugins/registry.h"

namespace weft {
namespace {

struct Allocation {
  const LoadedPlugin* plugin;  // null: plain memory of ours (mmap)
  size_t bytes;
};

std::mutex allocationsMutex;
std::map<void*, Allocation>& allocations() {
  static auto* all = new std::map<void*, Allocation>();  // outlives static destructors: freed at exit or never
  return *all;
}

const LoadedPlugin* memoryPlugin() {
  const std::vector<LoadedPlugin>& plugins = loadedTransports();
  auto it =
      std::find_if(plugins.begin(), plugins.end(), [](const LoadedPlugin& p) { return p.memory != nullptr; });
  return it != plugins.end() ? &*it : nullptr;
}

// Plain anonymous memory of ours, recorded like the plugin's.
void* allocatePlainMemory(size_t bytes) {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (memory == MAP_FAILED) fail(weftSystemError, "mmap of {} bytes failed: {}", bytes, std::strerror(errno));
  std::lock_guard<std::mutex> lock(allocationsMutex);
  allocations().emplace(memory, Allocation{nullptr, bytes});
  return memory;
}

}  // namespace

void* allocateHostMemory(size_t bytes) {
  if (bytes == 0) fail(weftInvalidArgument, "size is 0");
  const LoadedPlugin* plugin = memoryPlugin();
  if (plugin == nullptr) {
    log::debug("host memory: no loaded plugin shares memory; {} bytes of plain memory", bytes);
    return allocatePlainMemory(bytes);
  }
  void* memory = nullptr;
  char message[256] = "";
  if (weftResult_t r = plugin->memory->alloc(plugin->context, bytes, &memory, message, sizeof message);
      r != weftSuccess) {
    fail(r, "plugin {} could not allocate {} bytes: {}", plugin->name, bytes, message);
  }
  std::lock_guard<std::mutex> lock(allocationsMutex);
  allocations().emplace(memory, Allocation{plugin, bytes});
  return memory;
}

void freeHostMemory(void* memory) {
  Allocation allocation{};
  {
    std::lock_guard<std::mutex> lock(allocationsMutex);
    auto it = allocations().find(memory);
    if (it == allocations().end()) {
      fail(weftInvalidArgument, "{} was not returned by weftMemAlloc (or was freed already)", memory);
    }
    allocation = it->second;
    allocations().erase(it);
  }
  if (allocation.plugin == nullptr) {
    munmap(memory, allocation.bytes);
    return;
  }
  char message[256] = "";
  if (weftResult_t r =
          allocation.plugin->memory->free(allocation.plugin->context, memory, message, sizeof message);
      r != weftSuccess) {
    fail(r, "plugin {} could not free {}: {}", allocation.plugin->name, memory, message);
  }
}

bool isHostMemory(const void* memory, size_t bytes) {
  const auto* start = static_cast<const unsigned char*>(memory);
  std::lock_guard<std::mutex> lock(allocationsMutex);
  auto it = allocations().upper_bound(const_cast<void*>(memory));
  if (it == allocations().begin()) return false;
  --it;
  const auto* base = static_cast<const unsigned char*>(it->first);
  return start >= base && bytes <= it->second.bytes &&
         start - base <= static_cast<ptrdiff_t>(it->second.bytes - bytes);
}

bool makesHostMemory(const LoadedPlugin& plugin) { return memoryPlugin() == &plugin; }

HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

unsigned char* HostBuffer::reserve(size_t bytes) {
  if (bytes <= bytes_) return data_;
  release();
  try {
    data_ = static_cast<unsigned char*>(allocateHostMemory(bytes));
  } catch (const Error& e) {
    // Out of file descriptors, say: the collectives still run, through plain memory the peers cannot map.
    log::warn("{} bytes of host memory not available ({}): plain memory instead", bytes, e.what());
    data_ = static_cast<unsigned char*>(allocatePlainMemory(bytes));
  }
  bytes_ = bytes;
  return data_;
}

void HostBuffer::release() noexcept {
  if (data_ == nullptr) return;
  try {
    freeHostMemory(data_);
  } catch (const std::exception& e) {
    log::warn("could not give back a fusion buffer of {} bytes: {}", bytes_, e.what());
  }
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace weft
