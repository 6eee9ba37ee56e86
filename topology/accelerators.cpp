#include "topology/accelerators.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

namespace weft::topology {
namespace {

constexpr unsigned kPciBaseDisplay = 0x03;      // VGA, XGA, 3D controllers: GPUs
constexpr unsigned kPciBaseAccelerator = 0x12;  // processing accelerators: Gaudi, Trainium, ...

// Words the vendors' own drivers put in their OpenCL or DRM vendor strings, by PCI vendor id.
struct VendorWords {
  uint16_t pciVendor;
  std::string_view words[2];
};
constexpr VendorWords kVendors[] = {
    {0x10de, {"nvidia", ""}},
    {0x1002, {"amd", "advanced micro devices"}},
    {0x8086, {"intel", ""}},
};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool sameVendor(const Accelerator& onPci, const std::string& vendorText) {
  std::string text = lower(vendorText);
  for (const VendorWords& v : kVendors) {
    if (v.pciVendor != onPci.pciVendor) continue;
    return std::any_of(std::begin(v.words), std::end(v.words),
                       [&](std::string_view w) { return !w.empty() && text.find(w) != std::string::npos; });
  }
  return false;
}

}  // namespace

std::string pciIds(const Accelerator& accelerator) {
  return fmt::format("{:04x}:{:04x}", accelerator.pciVendor, accelerator.pciDevice);
}

const char* acceleratorKindOfPciClass(unsigned classId) {
  switch (classId >> 8) {
    case kPciBaseDisplay:
      return "gpu";
    case kPciBaseAccelerator:
      return "coprocessor";
    default:
      return nullptr;
  }
}

void joinUnplacedDevices(std::vector<Accelerator>& accelerators, std::vector<Accelerator> unplaced) {
  for (Accelerator& device : unplaced) {
    Accelerator* match = nullptr;
    int matches = 0;
    for (Accelerator& candidate : accelerators) {
      if (!candidate.pciBusId.empty() && sameVendor(candidate, device.vendor)) {
        match = &candidate;
        ++matches;
      }
    }
    if (matches != 1) {
      accelerators.push_back(std::move(device));
      continue;
    }
    match->names.insert(match->names.end(), device.names.begin(), device.names.end());
    if (match->model.empty()) match->model = device.model;
    if (match->vendor.empty()) match->vendor = device.vendor;
  }
}

}  // namespace weft::topology
