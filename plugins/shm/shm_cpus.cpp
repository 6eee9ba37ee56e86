#include "shm_cpus.h"

#include <sched.h>

namespace weft::shm {

void fillCpuMask(uint64_t (&mask)[kCpuMaskWords], uint32_t& beyondMask) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &cpus)) continue;
    if (cpu < static_cast<int>(64 * kCpuMaskWords)) {
      mask[cpu / 64] |= uint64_t{1} << (cpu % 64);
    } else {
      ++beyondMask;
    }
  }
}

}  // namespace weft::shm
