// processCpuBinding() and bindThisThreadNearProcess(): both start from the process's binding as hwloc
// reports it.
#include "topology/cpu_binding.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>

#include "core/common/log.h"
#include "topology/hwloc_handle.h"
#include "topology/topology.h"

namespace weft::topology {
namespace {

struct BitmapFree {
  void operator()(hwloc_bitmap_s* bitmap) const { hwloc_bitmap_free(bitmap); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapFree>;

Bitmap newBitmap() { return Bitmap(hwloc_bitmap_alloc()); }

// The union of the CPUs every thread of the process is bound to; nullptr (and `why`) when unknown.
Bitmap boundCpus(hwloc_topology_t topology, std::string& why) {
  Bitmap cpus = newBitmap();
  if (!cpus) {
    why = "out of memory";
    return nullptr;
  }
  if (hwloc_get_cpubind(topology, cpus.get(), HWLOC_CPUBIND_PROCESS) != 0) {
    why = std::string("hwloc_get_cpubind failed: ") + std::strerror(errno);
    return nullptr;
  }
  return cpus;
}

}  // namespace

CpuBinding processCpuBinding() {
  CpuBinding binding;
  const LoadedHwloc& hw = loadedHwloc();
  if (hw.topology == nullptr) return binding;
  std::string why;
  Bitmap cpus = boundCpus(hw.topology, why);
  Bitmap nodes = newBitmap();
  if (!cpus || !nodes) {
    log::debug("topology: process binding unknown: {}", why);
    return binding;
  }
  hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(hw.topology);
  hwloc_cpuset_to_nodeset(hw.topology, cpus.get(), nodes.get());
  binding.known = true;
  binding.cpus = bitmapList(cpus.get());
  binding.allowedCpus = bitmapList(allowed);
  binding.narrowerThanAllowed = !hwloc_bitmap_isincluded(allowed, cpus.get());
  binding.numaNodes = bitmapIndexes(nodes.get());
  return binding;
}

void bindThisThreadNearProcess(const char* threadName) {
  const LoadedHwloc& hw = loadedHwloc();
  if (hw.topology == nullptr) {
    log::debug("{} thread: left unbound (topology unknown: {})", threadName, hw.error);
    return;
  }
  // A topology from HWLOC_XMLFILE describes another machine; its CPU numbers mean nothing here.
  if (!hwloc_topology_is_thissystem(hw.topology)) {
    log::debug("{} thread: left unbound (hwloc's topology is not this machine's)", threadName);
    return;
  }
  std::string why;
  Bitmap process = boundCpus(hw.topology, why);
  Bitmap nodes = newBitmap();
  Bitmap target = newBitmap();
  if (!process || !nodes || !target) {
    log::debug("{} thread: left unbound ({})", threadName, why.empty() ? "out of memory" : why);
    return;
  }
  hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(hw.topology);
  if (hwloc_bitmap_isincluded(allowed, process.get())) {
    log::debug("{} thread: left unbound (the process may run on all CPUs {})", threadName,
               bitmapList(process.get()));
    return;
  }
  hwloc_cpuset_to_nodeset(hw.topology, process.get(), nodes.get());
  hwloc_cpuset_from_nodeset(hw.topology, target.get(), nodes.get());
  hwloc_bitmap_and(target.get(), target.get(), allowed);
  if (hwloc_bitmap_iszero(target.get())) {
    log::debug("{} thread: left unbound (no NUMA node found for CPUs {})", threadName, bitmapList(process.get()));
    return;
  }
  if (hwloc_set_cpubind(hw.topology, target.get(), HWLOC_CPUBIND_THREAD) != 0) {
    log::debug("{} thread: left unbound (hwloc_set_cpubind to {} failed: {})", threadName,
               bitmapList(target.get()), std::strerror(errno));
    return;
  }
  log::debug("{} thread: bound to CPUs {} (NUMA node(s) {} of the process's CPUs {})", threadName,
             bitmapList(target.get()), bitmapList(nodes.get()), bitmapList(process.get()));
}

size_t usableCores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const long usable =
      sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : sysconf(_SC_NPROCESSORS_ONLN);
  return usable > 0 ? static_cast<size_t>(usable) : 0;
}

std::vector<uint64_t> usableCpuMask() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return {};
  std::vector<uint64_t> mask((CPU_SETSIZE + 63) / 64, 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &cpus)) mask[cpu / 64] |= uint64_t{1} << (cpu % 64);
  }
  while (!mask.empty() && mask.back() == 0) mask.pop_back();
  return mask;
}

size_t cpusCovered(const std::vector<const std::vector<uint64_t>*>& masks) {
  std::vector<uint64_t> all;
  for (const std::vector<uint64_t>* mask : masks) {
    if (mask->empty()) return 0;
    all.resize(std::max(all.size(), mask->size()), 0);
    for (size_t w = 0; w < mask->size(); ++w) all[w] |= (*mask)[w];
  }
  size_t count = 0;
  for (uint64_t word : all) count += static_cast<size_t>(std::popcount(word));
  return count;
}

}  // namespace weft::topology
