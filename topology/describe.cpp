// describe(): the text form of a HostTopology, as weft-info prints it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "topology/topology.h"

namespace weft::topology {
namespace {

std::string bytes(uint64_t n) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(n);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", n) : fmt::format("{:.4g} {}", value, units[unit]);
}

std::string numaList(const std::vector<unsigned>& nodes) {
  return nodes.empty() ? "unknown" : fmt::format("{}", fmt::join(nodes, ","));
}

std::string pciPlace(const std::string& busId, float linkGBps, const std::vector<unsigned>& nodes,
                     const std::string& ids = "") {
  std::string text = busId.empty() ? "not on PCI" : "PCI " + busId + ids;
  if (linkGBps > 0) text += fmt::format(", link {:.3g} GB/s", linkGBps);
  return text + ", near NUMA node " + numaList(nodes);
}

std::string cacheName(const CacheGroup& c) {
  const char* suffix = c.type == "data" ? "d" : c.type == "instruction" ? "i" : "";
  return fmt::format("L{}{}", c.level, suffix);
}

}  // namespace

std::string describe(const HostTopology& t, const std::string& indent) {
  std::string out;
  auto line = [&](const std::string& text) { out += indent + text + "\n"; };
  if (!t.known) {
    line("unknown (" + t.unknownReason + ")");
    return out;
  }
  line(fmt::format("{} package(s), {} NUMA node(s), {} core(s), {} PU(s), {} memory (hwloc API {})", t.packages,
                   t.numaNodes.size(), t.cores, t.pus, bytes(t.memoryBytes), t.hwlocApiVersion));
  for (const NumaNode& n : t.numaNodes) {
    line(fmt::format("NUMA node {}: {}, CPUs {}", n.osIndex, bytes(n.memoryBytes), n.cpus));
  }
  std::vector<std::string> caches(t.caches.size());
  std::transform(t.caches.begin(), t.caches.end(), caches.begin(), [](const CacheGroup& c) {
    return fmt::format("{} {} x{}", cacheName(c), bytes(c.sizeBytes), c.count);
  });
  line("caches: " + (caches.empty() ? std::string("none reported") : fmt::format("{}", fmt::join(caches, ", "))));
  if (t.networkDevices.empty()) line("network devices: none on PCI");
  for (const NetworkDevice& d : t.networkDevices) {
    line(fmt::format("network device {} ({}): {}", d.name, d.kind,
                     pciPlace(d.pciBusId, d.pcieLinkGBps, d.numaNodes)));
  }
  if (t.accelerators.empty()) line("GPUs/co-processors: none");
  for (const Accelerator& a : t.accelerators) {
    std::string names = a.names.empty() ? "without an OS device" : fmt::format("{}", fmt::join(a.names, "/"));
    line(fmt::format("{} {}{}: {}", a.kind, names, a.model.empty() ? "" : " (" + a.model + ")",
                     pciPlace(a.pciBusId, a.pcieLinkGBps, a.numaNodes, " [" + pciIds(a) + "]")));
  }
  const CpuBinding& b = t.processBinding;
  if (!b.known) {
    line("process binding: unknown");
  } else if (b.narrowerThanAllowed) {
    line(fmt::format("process binding: CPUs {} of {} (NUMA node {}): Weft's threads run on those NUMA nodes",
                     b.cpus, b.allowedCpus, numaList(b.numaNodes)));
  } else {
    line(fmt::format("process binding: none (CPUs {}, all allowed): Weft's threads stay unbound", b.cpus));
  }
  return out;
}

}  // namespace weft::topology
