// Memory the ranks of a host can map into each other: weftMemAlloc's buffers and the lanes' fusion buffers.
// The first loaded plugin that offers the memory extension (weftMemoryOps_v1) makes it; without one it is
// plain anonymous memory, which works the same but is not shared.
#pragma once

#include <cstddef>

namespace weft {

// `bytes` (> 0) of host memory; throws weft::Error (weftSystemError, or the plugin's code with its message).
void* allocateHostMemory(size_t bytes);
// Gives back memory from allocateHostMemory; throws weftInvalidArgument for any other pointer.
void freeHostMemory(void* memory);
// Whether [memory, memory + bytes) lies within one allocation of allocateHostMemory or of a HostBuffer (its
// plain fallback included).
bool isHostMemory(const void* memory, size_t bytes);
// Whether `plugin` is the one that makes host memory (its peers can then map it).
struct LoadedPlugin;
bool makesHostMemory(const LoadedPlugin& plugin);

// A buffer of host memory that grows on demand and is given back when it dies: a lane's fusion buffers, into
// which fused collectives pack their calls, so that a backend's peers can read them in place (plugins/shm).
class HostBuffer {
 public:
  HostBuffer() = default;
  ~HostBuffer();
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  // At least `bytes`: the buffer held when large enough, else a new one (the contents are not kept); plain
  // memory, with a warning, when the plugin cannot make more (file descriptors run out).
  unsigned char* reserve(size_t bytes);
  size_t capacity() const { return bytes_; }

 private:
  void release() noexcept;

  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace weft
