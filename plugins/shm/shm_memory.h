// Memory for weftMemAlloc (weftMemoryOps_v1) that the peers of a node communicator map directly: one sealed
// memfd per buffer, kept open so that a peer can open it through /proc/<pid>/fd (as it opens our segments)
// and map it. A rank then reads or writes a peer's buffer with memcpy instead of process_vm_readv/writev.
// A process-wide registry says which memory is such, for the node backend to publish (shm_node.h).
#ifndef WEFT_PLUGINS_SHM_MEMORY_H
#define WEFT_PLUGINS_SHM_MEMORY_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "weft/plugin.h"

namespace weft::shm {

// One allocation as its owner publishes it: where it lies in the owner, its fd there, and the memfd's inode
// (a peer that opens the fd checks it: an fd number may have been reused).
struct SharedRegion {
  uint64_t base;
  uint64_t bytes;  // 0: an empty table slot
  uint64_t inode;
  int32_t fd;
  int32_t reserved;
};

// size bytes rounded up to pages, zeroed and faulted in. False with *error set.
bool sharedAllocate(size_t size, void** ptr, std::string* error);
// Unmaps and closes an allocation of sharedAllocate. False with *error set when ptr is not one.
bool sharedRelease(void* ptr, std::string* error);
// Whether any allocation is live (one relaxed load): the node backend looks further only then.
bool anySharedRegions();
// The live allocation holding [address, address + bytes), if any.
bool findSharedRegion(uint64_t address, size_t bytes, SharedRegion* region);
// Counts releases: a table of regions filled before the count changed must be checked again.
uint64_t sharedReleases();
bool sharedRegionLive(const SharedRegion& region);

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_MEMORY_H
