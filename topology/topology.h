// What this machine looks like to Weft: packages, NUMA nodes, cores, caches, PCI network devices and
// accelerators, and where this process may run. Discovered through hwloc once per process; when hwloc fails
// the description says "unknown" (known == false) instead of failing the caller.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft::topology {

struct NumaNode {
  unsigned osIndex = 0;
  uint64_t memoryBytes = 0;  // local memory; 0 when hwloc does not know
  std::string cpus;          // CPU list, e.g. "0-15,32-47"
};

// Caches of one level, type and size, and how many the machine has.
struct CacheGroup {
  int level = 0;     // 1, 2, 3, ...
  std::string type;  // "data", "instruction" or "unified"
  uint64_t sizeBytes = 0;
  int count = 0;
};

struct NetworkDevice {
  std::string name;                 // OS name: eth0, ib0, mlx5_0
  std::string kind;                 // "network" (a kernel interface) or "openfabrics" (an RDMA device)
  std::string pciBusId;             // "0000:00:03.0"; empty when hwloc did not place it on PCI
  float pcieLinkGBps = 0;           // PCIe link bandwidth as hwloc reports it; 0 when unknown
  std::vector<unsigned> numaNodes;  // NUMA nodes it is attached near (OS indexes); empty when unknown
};

// One GPU or co-processor: a PCI function of class display or processing accelerator, with the OS devices
// hwloc finds on it (cuda0, nvml0, card0, opencl0d0, ...); names is empty when hwloc has none.
struct Accelerator {
  std::vector<std::string> names;
  std::string kind;  // "gpu" or "coprocessor"
  std::string pciBusId;
  uint16_t pciVendor = 0;  // PCI vendor and device ids (0x10de:0x2330 is an H100); 0 when not on PCI
  uint16_t pciDevice = 0;
  std::string vendor;  // hwloc's GPUVendor or PCIVendor info; empty when not given
  std::string model;   // hwloc's GPUModel info, else the PCI device name; empty when neither is given
  float pcieLinkGBps = 0;
  std::vector<unsigned> numaNodes;
};

// The CPUs this process is bound to (all of its threads together, as hwloc_get_cpubind reports).
struct CpuBinding {
  bool known = false;
  std::string cpus;                  // list form, "0-3"
  std::string allowedCpus;           // CPUs the process may use at all (cgroup limits included)
  bool narrowerThanAllowed = false;  // bound to a subset: mpirun --bind-to core/socket, taskset
  std::vector<unsigned> numaNodes;   // NUMA nodes holding the bound CPUs
};

struct HostTopology {
  bool known = false;  // false: hwloc failed; unknownReason says why and the counts are 0
  std::string unknownReason;
  std::string hwlocApiVersion;  // API version of the hwloc library loaded at run time (2.9 reports 2.8.0)
  int packages = 0;
  int cores = 0;
  int pus = 0;  // hardware threads
  uint64_t memoryBytes = 0;
  std::vector<NumaNode> numaNodes;
  std::vector<CacheGroup> caches;  // by level, then type
  std::vector<NetworkDevice> networkDevices;
  std::vector<Accelerator> accelerators;
  CpuBinding processBinding;  // read at each hostTopology() call: a process may be rebound
};

// The machine's description: the hardware discovered once (thread-safe, lazily) plus the current binding.
HostTopology hostTopology();

// The process's CPU binding now.
CpuBinding processCpuBinding();

// "10de:2330": an accelerator's PCI vendor and device ids as lspci prints them.
std::string pciIds(const Accelerator& accelerator);

// Multi-line text form for weft-info and logs, each line indented by `indent`.
std::string describe(const HostTopology& topology, const std::string& indent = "  ");

}  // namespace weft::topology
