#include "topology/hwloc_handle.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/common/log.h"

namespace weft::topology {
namespace {

LoadedHwloc load() {
  LoadedHwloc loaded;
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) {
    loaded.error = std::string("hwloc_topology_init failed: ") + std::strerror(errno);
    log::warn("topology unknown: {}", loaded.error);
    return loaded;
  }
  // PCI devices are filtered out by default; keep the ones that matter (NICs, GPUs, co-processors) and the
  // bridges that place them near a NUMA node.
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_type_filter(topology, HWLOC_OBJ_L1ICACHE, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(topology) != 0) {
    loaded.error = std::string("hwloc_topology_load failed: ") + std::strerror(errno);
    log::warn("topology unknown: {}", loaded.error);
    hwloc_topology_destroy(topology);
    return loaded;
  }
  loaded.topology = topology;
  log::debug("topology: hwloc loaded this machine's topology");
  return loaded;
}

}  // namespace

const LoadedHwloc& loadedHwloc() {
  static const LoadedHwloc* loaded = new LoadedHwloc(load());  // C++ guarantees one thread runs load()
  return *loaded;
}

std::string bitmapList(hwloc_const_bitmap_t bitmap) {
  char* text = nullptr;
  if (bitmap == nullptr || hwloc_bitmap_list_asprintf(&text, bitmap) < 0 || text == nullptr) return "unknown";
  std::string list(text);
  std::free(text);
  return list;
}

std::vector<unsigned> bitmapIndexes(hwloc_const_bitmap_t bitmap) {
  std::vector<unsigned> indexes;
  if (bitmap == nullptr || hwloc_bitmap_weight(bitmap) < 0) return indexes;  // infinite: not a real set
  for (int i = hwloc_bitmap_first(bitmap); i >= 0; i = hwloc_bitmap_next(bitmap, i)) {
    indexes.push_back(static_cast<unsigned>(i));
  }
  return indexes;
}

}  // namespace weft::topology
