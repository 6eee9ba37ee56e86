// The CPUs the node backend's ranks may run on. Ranks that share CPUs must not spin while they wait: with
// more ranks than CPUs a spinning rank holds the CPU of the rank it waits for (taskset, cgroup cpusets, a
// Slurm allocation smaller than its tasks), while ranks bound to a CPU each (mpirun --bind-to core) may spin.
// So every rank puts its affinity mask in the node address it sends the others (cpuMask, cpusBeyondMask),
// and at connect each counts the CPUs they may use between them (cpusBetween) to decide whether waits spin.
//
// Core does the same for its own waits with topology::usableCpuMask and topology::cpusCovered
// (topology/cpu_binding.h); a plugin includes nothing but weft/plugin.h, so this is the plugin's own copy.
#ifndef WEFT_PLUGINS_SHM_CPUS_H
#define WEFT_PLUGINS_SHM_CPUS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::shm {

// Words of a node address's CPU mask: CPU i is bit i % 64 of word i / 64, for the first 512 CPUs; the ones
// beyond are only counted.
inline constexpr size_t kCpuMaskWords = 8;

// Fills mask and beyondMask (both zero on entry) with the CPUs the calling thread may run on; leaves them
// zero when its affinity cannot be read.
void fillCpuMask(uint64_t (&mask)[kCpuMaskWords], uint32_t& beyondMask);

// How many CPUs the ranks may run on between them, from each rank's node address (its cpuMask and
// cpusBeyondMask): the union of the masks, plus every rank's CPUs beyond them counted as if no other rank
// had them.
template <typename Address>
size_t cpusBetween(const std::vector<Address>& all) {
  size_t count = 0;
  for (size_t w = 0; w < kCpuMaskWords; ++w) {
    uint64_t word = 0;
    for (const Address& a : all) word |= a.cpuMask[w];
    count += static_cast<size_t>(__builtin_popcountll(word));
  }
  for (const Address& a : all) count += a.cpusBeyondMask;
  return count;
}

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_CPUS_H
