// weftMemAlloc / weftMemFree: buffers that the ranks of a host can reach directly (core/plugins/host_memory.h).
#include "core/api/guard.h"
#include "core/plugins/host_memory.h"

using namespace weft;

extern "C" {

WEFT_API weftResult_t weftMemAlloc(void** ptr, size_t size) {
  return guarded(__func__, [&] {
    requireNotNull(ptr, "ptr");
    *ptr = nullptr;
    *ptr = allocateHostMemory(size);
  });
}

WEFT_API weftResult_t weftMemFree(void* ptr) {
  return guarded(__func__, [&] {
    if (ptr != nullptr) freeHostMemory(ptr);
  });
}

}  // extern "C"
