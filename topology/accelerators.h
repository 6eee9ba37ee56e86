// Joining what hwloc reports of one GPU or co-processor into one Accelerator. A GPU shows up in hwloc as a PCI
// function (class display or processing accelerator) and as OS devices below it (card0, cuda0, nvml0), but
// Debian's hwloc has no CUDA or NVML backend and servers often load no DRM driver for a compute GPU, so on
// such machines the PCI function alone says where the GPU is, and the OpenCL device that says what it is
// may come without a PCI place (seen on an H100 node: opencl1d0, "not on PCI").
#pragma once

#include <cstdint>
#include <vector>

#include "topology/topology.h"

namespace weft::topology {

// Whether a PCI class (hwloc's class_id: base class << 8 | subclass) is a GPU ("gpu": display controllers)
// or another accelerator ("coprocessor": processing accelerators), or neither (nullptr).
const char* acceleratorKindOfPciClass(unsigned classId);

// Adds each OS device that hwloc left off PCI to the one PCI accelerator of its vendor when there is exactly
// one, taking its names and model; with several, which is which would be a guess, so it stays its own entry.
void joinUnplacedDevices(std::vector<Accelerator>& accelerators, std::vector<Accelerator> unplaced);

}  // namespace weft::topology
