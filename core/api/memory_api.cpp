// weftMemAlloc / weftMemFree: buffers that the ranks of a host can reach directly. The first loaded plugin
// that offers the memory extension (weftMemoryOps_v1) makes them; without one they are plain anonymous
// memory. Each buffer remembers who made it, so that weftMemFree hands it back to the same one.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "core/api/guard.h"
#include "core/common/log.h"
#include "core/plugins/registry.h"

using namespace weft;

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

}  // namespace

extern "C" {

WEFT_API weftResult_t weftMemAlloc(void** ptr, size_t size) {
  return guarded(__func__, [&] {
    requireNotNull(ptr, "ptr");
    *ptr = nullptr;
    if (size == 0) fail(weftInvalidArgument, "size is 0");
    const LoadedPlugin* plugin = memoryPlugin();
    void* memory = nullptr;
    if (plugin != nullptr) {
      char message[256] = "";
      if (weftResult_t r = plugin->memory->alloc(plugin->context, size, &memory, message, sizeof message);
          r != weftSuccess) {
        fail(r, "plugin {} could not allocate {} bytes: {}", plugin->name, size, message);
      }
    } else {
      memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (memory == MAP_FAILED) fail(weftSystemError, "mmap of {} bytes failed: {}", size, std::strerror(errno));
      log::debug("weftMemAlloc: no loaded plugin shares memory; {} bytes of plain memory", size);
    }
    std::lock_guard<std::mutex> lock(allocationsMutex);
    allocations().emplace(memory, Allocation{plugin, size});
    *ptr = memory;
  });
}

WEFT_API weftResult_t weftMemFree(void* ptr) {
  return guarded(__func__, [&] {
    if (ptr == nullptr) return;
    Allocation allocation{};
    {
      std::lock_guard<std::mutex> lock(allocationsMutex);
      auto it = allocations().find(ptr);
      if (it == allocations().end()) {
        fail(weftInvalidArgument, "{} was not returned by weftMemAlloc (or was freed already)", ptr);
      }
      allocation = it->second;
      allocations().erase(it);
    }
    if (allocation.plugin == nullptr) {
      munmap(ptr, allocation.bytes);
      return;
    }
    char message[256] = "";
    if (weftResult_t r = allocation.plugin->memory->free(allocation.plugin->context, ptr, message, sizeof message);
        r != weftSuccess) {
      fail(r, "plugin {} could not free {}: {}", allocation.plugin->name, ptr, message);
    }
  });
}

}  // extern "C"
