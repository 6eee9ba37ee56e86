// The machine's hwloc topology, loaded once per process on first use. Loading reads /sys and /proc (tens of
// milliseconds, more on large machines), so discovery and thread binding share one copy. After loading, hwloc
// allows concurrent read-only use from any thread, which is all Weft does with it.
#pragma once

#include <hwloc.h>

#include <string>
#include <vector>

namespace weft::topology {

struct LoadedHwloc {
  hwloc_topology_t topology = nullptr;  // nullptr when hwloc failed
  std::string error;                    // why it failed (already logged)
};

// Thread-safe; the topology is never destroyed (threads may still bind while the process exits).
const LoadedHwloc& loadedHwloc();

// A cpuset or nodeset as a list, e.g. "0-3,8".
std::string bitmapList(hwloc_const_bitmap_t bitmap);
// The indexes set in a (finite) bitmap, in order.
std::vector<unsigned> bitmapIndexes(hwloc_const_bitmap_t bitmap);

}  // namespace weft::topology
