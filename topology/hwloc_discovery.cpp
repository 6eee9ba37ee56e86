// hostTopology(): walks the shared hwloc topology once and keeps the parts Weft uses.
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "core/common/log.h"
#include "topology/accelerators.h"
#include "topology/hwloc_handle.h"
#include "topology/topology.h"

namespace weft::topology {
namespace {

std::string pciBusId(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.dev, a.func);
}

// The PCI function an OS device sits on, or nullptr (hwloc puts OS devices directly below it).
hwloc_obj_t pciParent(hwloc_obj_t osdev) {
  hwloc_obj_t parent = osdev->parent;
  return parent != nullptr && parent->type == HWLOC_OBJ_PCI_DEVICE ? parent : nullptr;
}

// NUMA nodes of the nearest CPU-side ancestor of an I/O object: where its DMA lands fastest.
std::vector<unsigned> nearNumaNodes(hwloc_topology_t topology, hwloc_obj_t io) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, io);
  return ancestor != nullptr ? bitmapIndexes(ancestor->nodeset) : std::vector<unsigned>{};
}

const char* cacheTypeName(hwloc_obj_cache_type_t type) {
  switch (type) {
    case HWLOC_OBJ_CACHE_DATA:
      return "data";
    case HWLOC_OBJ_CACHE_INSTRUCTION:
      return "instruction";
    default:
      return "unified";
  }
}

int count(hwloc_topology_t topology, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(topology, type);
  return n < 0 ? 0 : n;  // -1: the type sits at several depths, which hwloc allows only for I/O and Misc
}

void addNumaNodes(hwloc_topology_t topology, HostTopology& host) {
  for (hwloc_obj_t node = nullptr; (node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node));) {
    host.numaNodes.push_back({node->os_index, node->attr->numanode.local_memory, bitmapList(node->cpuset)});
  }
}

void addCaches(hwloc_topology_t topology, HostTopology& host) {
  // Grouped by (level, type, size): hybrid CPUs have caches of one level in two sizes.
  std::map<std::tuple<int, std::string, uint64_t>, int> groups;
  for (int type = HWLOC_OBJ_TYPE_MIN; type < HWLOC_OBJ_TYPE_MAX; ++type) {
    auto objType = static_cast<hwloc_obj_type_t>(type);
    if (!hwloc_obj_type_is_cache(objType)) continue;
    for (hwloc_obj_t cache = nullptr; (cache = hwloc_get_next_obj_by_type(topology, objType, cache));) {
      const auto& a = cache->attr->cache;
      ++groups[{static_cast<int>(a.depth), cacheTypeName(a.type), a.size}];
    }
  }
  for (const auto& [key, n] : groups) {
    host.caches.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  }
}

Accelerator acceleratorOn(hwloc_topology_t topology, hwloc_obj_t pci, const char* kind) {
  Accelerator device;
  device.kind = kind;
  device.pciBusId = pciBusId(pci);
  device.pciVendor = pci->attr->pcidev.vendor_id;
  device.pciDevice = pci->attr->pcidev.device_id;
  device.pcieLinkGBps = pci->attr->pcidev.linkspeed;
  device.numaNodes = nearNumaNodes(topology, pci);
  return device;
}

// Sets `field` from hwloc's info `name` of `obj` unless something already set it (the first source wins).
void fillFromInfo(std::string& field, hwloc_obj_t obj, const char* name) {
  const char* value = hwloc_obj_get_info_by_name(obj, name);
  if (value != nullptr && field.empty()) field = value;
}

void takeOsDevice(hwloc_obj_t osdev, Accelerator& device) {
  device.names.emplace_back(osdev->name != nullptr ? osdev->name : "?");
  fillFromInfo(device.model, osdev, "GPUModel");
  fillFromInfo(device.vendor, osdev, "GPUVendor");
}

void addDevices(hwloc_topology_t topology, HostTopology& host) {
  // GPUs and accelerators by their PCI function first: where hwloc has no DRM, CUDA or NVML backend for a
  // GPU, that function is all it places of it.
  std::map<hwloc_obj_t, size_t> acceleratorOfPci;
  for (hwloc_obj_t pci = nullptr; (pci = hwloc_get_next_pcidev(topology, pci));) {
    if (const char* kind = acceleratorKindOfPciClass(pci->attr->pcidev.class_id)) {
      acceleratorOfPci.emplace(pci, host.accelerators.size());
      host.accelerators.push_back(acceleratorOn(topology, pci, kind));
    }
  }
  std::vector<Accelerator> unplaced;  // GPU OS devices hwloc put on no PCI function (some OpenCL drivers)
  for (hwloc_obj_t osdev = nullptr; (osdev = hwloc_get_next_osdev(topology, osdev));) {
    hwloc_obj_osdev_type_t type = osdev->attr->osdev.type;
    hwloc_obj_t pci = pciParent(osdev);
    if (type == HWLOC_OBJ_OSDEV_NETWORK || type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      host.networkDevices.push_back(
          {osdev->name != nullptr ? osdev->name : "?", type == HWLOC_OBJ_OSDEV_NETWORK ? "network" : "openfabrics",
           pci ? pciBusId(pci) : "", pci ? pci->attr->pcidev.linkspeed : 0.0F, nearNumaNodes(topology, osdev)});
      continue;
    }
    if (type != HWLOC_OBJ_OSDEV_GPU && type != HWLOC_OBJ_OSDEV_COPROC) continue;
    const char* kind = type == HWLOC_OBJ_OSDEV_GPU ? "gpu" : "coprocessor";
    if (pci == nullptr) {
      unplaced.emplace_back();
      unplaced.back().kind = kind;
      unplaced.back().numaNodes = nearNumaNodes(topology, osdev);
      takeOsDevice(osdev, unplaced.back());
      continue;
    }
    auto [known, added] = acceleratorOfPci.emplace(pci, host.accelerators.size());
    if (added) host.accelerators.push_back(acceleratorOn(topology, pci, kind));  // a GPU of another PCI class
    takeOsDevice(osdev, host.accelerators[known->second]);
  }
  joinUnplacedDevices(host.accelerators, std::move(unplaced));
  // The PCI names (from the pci.ids database, when hwloc has it) only where no OS device said better.
  for (const auto& [pci, index] : acceleratorOfPci) {
    fillFromInfo(host.accelerators[index].model, pci, "PCIDevice");
    fillFromInfo(host.accelerators[index].vendor, pci, "PCIVendor");
  }
}

std::string versionText(unsigned version) {
  return fmt::format("{}.{}.{}", version >> 16, (version >> 8) & 0xff, version & 0xff);
}

// The hardware part, which does not change while the process runs.
HostTopology discoverHardware() {
  HostTopology host;
  host.hwlocApiVersion = versionText(hwloc_get_api_version());
  const LoadedHwloc& hw = loadedHwloc();
  if (hw.topology == nullptr) {
    host.unknownReason = hw.error;
    return host;
  }
  host.known = true;
  host.packages = count(hw.topology, HWLOC_OBJ_PACKAGE);
  host.cores = count(hw.topology, HWLOC_OBJ_CORE);
  host.pus = count(hw.topology, HWLOC_OBJ_PU);
  host.memoryBytes = hwloc_get_root_obj(hw.topology)->total_memory;
  addNumaNodes(hw.topology, host);
  addCaches(hw.topology, host);
  addDevices(hw.topology, host);
  log::debug("topology: {} packages, {} NUMA nodes, {} cores, {} PUs, {} network devices, {} accelerators",
             host.packages, host.numaNodes.size(), host.cores, host.pus, host.networkDevices.size(),
             host.accelerators.size());
  return host;
}

}  // namespace

HostTopology hostTopology() {
  static const HostTopology* hardware = new HostTopology(discoverHardware());  // once, thread-safe
  HostTopology host = *hardware;
  host.processBinding = processCpuBinding();
  return host;
}

}  // namespace weft::topology
