// hwloc discovery (topology::hostTopology) against what Linux itself says in /sys and through
// sched_getaffinity.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "sysfs.h"
#include "topology/topology.h"

namespace weft::topology {
namespace {

using weft::testing::formatList;
using weft::testing::parseList;
using weft::testing::readLine;

std::string cpuFile(unsigned cpu, const std::string& rest) {
  return "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/" + rest;
}

HostTopology discovered() {
  HostTopology t = hostTopology();
  if (!t.known) ADD_FAILURE() << "hwloc failed: " << t.unknownReason;
  return t;
}

TEST(Discovery, PusAreTheUsableOnlineCpus) {
  HostTopology t = discovered();
  std::set<unsigned> usable = weft::testing::usableCpus();
  EXPECT_EQ(t.pus, static_cast<int>(usable.size())) << "usable CPUs " << formatList(usable);
  // With no cgroup limit, that is also what sysconf counts.
  if (usable.size() == parseList(readLine("/sys/devices/system/cpu/online")).size()) {
    EXPECT_EQ(t.pus, sysconf(_SC_NPROCESSORS_ONLN));
  }
}

TEST(Discovery, CoresAndPackagesMatchCpuTopology) {
  HostTopology t = discovered();
  std::set<std::pair<std::string, std::string>> cores;
  std::set<std::string> packages;
  for (unsigned cpu : weft::testing::usableCpus()) {
    std::string package = readLine(cpuFile(cpu, "topology/physical_package_id"));
    std::string core = readLine(cpuFile(cpu, "topology/core_id"));
    if (package.empty() || core.empty()) GTEST_SKIP() << "SKIP: cpu" << cpu << "/topology is not readable here";
    cores.emplace(package, core);
    packages.insert(package);
  }
  EXPECT_EQ(t.cores, static_cast<int>(cores.size()));
  EXPECT_EQ(t.packages, static_cast<int>(packages.size()));
}

TEST(Discovery, NumaNodesMatchSysfs) {
  HostTopology t = discovered();
  std::set<unsigned> nodes = weft::testing::usableNumaNodes();
  ASSERT_EQ(t.numaNodes.size(), nodes.size());
  std::set<unsigned> allCpus;
  for (const NumaNode& n : t.numaNodes) {
    EXPECT_TRUE(nodes.count(n.osIndex)) << "hwloc node " << n.osIndex << " not in " << formatList(nodes);
    EXPECT_EQ(n.cpus, formatList(weft::testing::numaNodeCpus(n.osIndex))) << "node " << n.osIndex;
    for (unsigned cpu : parseList(n.cpus)) allCpus.insert(cpu);
  }
  EXPECT_EQ(allCpus, weft::testing::usableCpus());
}

// Node memory as the kernel reports it (MemTotal), less what is reserved as huge pages (hwloc counts those
// apart).
TEST(Discovery, NumaMemoryMatchesMeminfo) {
  HostTopology t = discovered();
  uint64_t sum = 0;
  for (const NumaNode& n : t.numaNodes) {
    std::string folder = "/sys/devices/system/node/node" + std::to_string(n.osIndex);
    std::ifstream meminfo(folder + "/meminfo");
    if (!meminfo) GTEST_SKIP() << "SKIP: " << folder << "/meminfo is not readable (kernel without NUMA)";
    uint64_t totalKiB = 0;
    for (std::string line; std::getline(meminfo, line);) {
      std::smatch m;
      if (std::regex_search(line, m, std::regex("MemTotal:\\s+([0-9]+) kB"))) totalKiB = std::stoull(m[1]);
    }
    uint64_t hugeBytes = 0;
    std::error_code none;
    for (const auto& dir : std::filesystem::directory_iterator(folder + "/hugepages", none)) {
      std::smatch m;
      std::string name = dir.path().filename().string();
      if (std::regex_match(name, m, std::regex("hugepages-([0-9]+)kB"))) {
        hugeBytes += std::stoull(m[1]) * 1024 * std::stoull("0" + readLine(dir.path().string() + "/nr_hugepages"));
      }
    }
    uint64_t total = totalKiB * 1024;
    EXPECT_LE(n.memoryBytes, total) << "node " << n.osIndex;
    EXPECT_GE(n.memoryBytes + hugeBytes, total) << "node " << n.osIndex;
    sum += n.memoryBytes;
  }
  EXPECT_EQ(t.memoryBytes, sum);
}

// Every cache of the first usable CPU is reported with its level, type and size, and each level counts as
// many caches as there are distinct sharing sets among the usable CPUs.
TEST(Discovery, CachesMatchSysfs) {
  HostTopology t = discovered();
  std::map<std::tuple<int, std::string, uint64_t>, std::set<std::string>> sysfs;
  for (unsigned cpu : weft::testing::usableCpus()) {
    for (int index = 0;; ++index) {
      std::string dir = cpuFile(cpu, "cache/index" + std::to_string(index) + "/");
      std::string level = readLine(dir + "level");
      if (level.empty()) break;
      std::string type = readLine(dir + "type");  // Data, Instruction, Unified
      std::string size = readLine(dir + "size");  // 48K
      if (size.empty()) continue;
      uint64_t bytes = std::stoull(size) * (size.back() == 'K' ? 1024 : size.back() == 'M' ? 1024 * 1024 : 1);
      std::string kind = type == "Data" ? "data" : type == "Instruction" ? "instruction" : "unified";
      sysfs[{std::stoi(level), kind, bytes}].insert(readLine(dir + "shared_cpu_list"));
    }
  }
  if (sysfs.empty()) GTEST_SKIP() << "SKIP: no cache information in /sys/devices/system/cpu/cpu*/cache";
  std::map<std::tuple<int, std::string, uint64_t>, int> reported;
  for (const CacheGroup& c : t.caches) reported[{c.level, c.type, c.sizeBytes}] = c.count;
  for (const auto& [key, sharingSets] : sysfs) {
    auto [level, kind, bytes] = key;
    ASSERT_TRUE(reported.count(key)) << "L" << level << " " << kind << " " << bytes << " bytes not reported";
    EXPECT_EQ(reported[key], static_cast<int>(sharingSets.size())) << "L" << level << " " << kind;
  }
}

// Network devices are the /sys/class/net entries backed by a PCI device, placed on that device's bus id.
TEST(Discovery, NetworkDevicesMatchPciInterfaces) {
  HostTopology t = discovered();
  std::map<std::string, std::string> sysfs;  // name -> /sys/devices path
  for (const auto& [name, path] : weft::testing::pciClassEntries("net")) sysfs[name] = path;
  for (const auto& [name, path] : weft::testing::pciClassEntries("infiniband")) sysfs[name] = path;
  std::set<std::string> expected;
  for (const auto& [name, path] : sysfs) expected.insert(name);
  std::set<std::string> reported;
  for (const NetworkDevice& d : t.networkDevices) {
    reported.insert(d.name);
    ASSERT_TRUE(sysfs.count(d.name)) << d.name << " is not a PCI-backed entry of /sys/class/net or infiniband";
    EXPECT_FALSE(d.pciBusId.empty()) << d.name;
    EXPECT_NE(sysfs[d.name].find("/" + d.pciBusId + "/"), std::string::npos)
        << d.name << " on " << d.pciBusId << " but sysfs says " << sysfs[d.name];
    for (unsigned node : d.numaNodes) EXPECT_TRUE(weft::testing::usableNumaNodes().count(node)) << d.name;
  }
  EXPECT_EQ(reported, expected);
}

// GPUs the kernel's DRM layer knows (card*, renderD* on PCI) appear among the accelerators, and the
// accelerators' DRM names exist there. No GPU here is a valid result: both sides are then empty.
TEST(Discovery, DrmGpusMatchSysfs) {
  HostTopology t = discovered();
  std::regex drmName("^(card|renderD)[0-9]+$");
  std::set<std::string> expected;
  for (const auto& [name, path] : weft::testing::pciClassEntries("drm")) {
    if (std::regex_match(name, drmName)) expected.insert(name);
  }
  std::set<std::string> reported;
  for (const Accelerator& a : t.accelerators) {
    EXPECT_TRUE(a.kind == "gpu" || a.kind == "coprocessor") << a.kind;
    for (const std::string& name : a.names) {
      if (std::regex_match(name, drmName)) reported.insert(name);
    }
  }
  EXPECT_EQ(reported, expected);
}

// Every PCI function of class display (0x03) or processing accelerator (0x12) is one accelerator, placed on
// its bus with its vendor and device ids, whether or not hwloc has an OS device for it: an H100 node with
// no DRM driver and Debian's hwloc (no CUDA or NVML backend) has only that function and an OpenCL device.
TEST(Discovery, PciGpusAndAcceleratorsMatchSysfs) {
  HostTopology t = discovered();
  auto baseClass = [](const std::filesystem::path& device) {
    return std::strtoul(readLine(device / "class").c_str(), nullptr, 16) >> 16;  // "0x030200" -> 0x03
  };
  std::map<std::string, std::string> expected;  // bus id -> "vendor:device"
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/bus/pci/devices", error)) {
    if (baseClass(entry.path()) != 0x03 && baseClass(entry.path()) != 0x12) continue;
    expected[entry.path().filename().string()] =
        readLine(entry.path() / "vendor").substr(2) + ":" + readLine(entry.path() / "device").substr(2);
  }
  std::map<std::string, std::string> reported;
  for (const Accelerator& a : t.accelerators) {
    if (a.pciBusId.empty()) continue;
    EXPECT_TRUE(reported.emplace(a.pciBusId, pciIds(a)).second) << a.pciBusId << " reported twice";
    EXPECT_EQ(a.kind, baseClass("/sys/bus/pci/devices/" + a.pciBusId) == 0x03 ? "gpu" : "coprocessor")
        << a.pciBusId;
    for (unsigned node : a.numaNodes) EXPECT_TRUE(weft::testing::usableNumaNodes().count(node)) << a.pciBusId;
  }
  EXPECT_EQ(reported, expected);
}

TEST(Discovery, ProcessBindingIsTheAffinity) {
  HostTopology t = discovered();
  std::set<unsigned> affinity = weft::testing::threadAffinity();  // the only thread of this test process
  const CpuBinding& b = t.processBinding;
  ASSERT_TRUE(b.known);
  EXPECT_EQ(b.cpus, formatList(affinity));
  EXPECT_EQ(b.allowedCpus, formatList(weft::testing::usableCpus()));
  EXPECT_EQ(b.narrowerThanAllowed, affinity != weft::testing::usableCpus());
  std::set<unsigned> nodes;
  for (unsigned node : weft::testing::usableNumaNodes()) {
    for (unsigned cpu : weft::testing::numaNodeCpus(node)) {
      if (affinity.count(cpu)) nodes.insert(node);
    }
  }
  EXPECT_EQ(std::set<unsigned>(b.numaNodes.begin(), b.numaNodes.end()), nodes);
}

// The first use may come from several threads at once (two streams created together): hwloc loads once
// and everyone sees the same machine.
TEST(Discovery, ConcurrentFirstUseAgrees) {
  std::vector<HostTopology> seen(8);
  std::vector<std::thread> threads;
  std::transform(seen.begin(), seen.end(), std::back_inserter(threads),
                 [](HostTopology& slot) { return std::thread([&slot] { slot = hostTopology(); }); });
  for (std::thread& thread : threads) thread.join();
  for (const HostTopology& t : seen) {
    EXPECT_TRUE(t.known);
    EXPECT_EQ(t.pus, seen[0].pus);
    EXPECT_EQ(t.numaNodes.size(), seen[0].numaNodes.size());
    EXPECT_EQ(t.networkDevices.size(), seen[0].networkDevices.size());
  }
}

TEST(Describe, NamesWhatWasFound) {
  HostTopology t = discovered();
  std::string text = describe(t);
  EXPECT_NE(text.find(std::to_string(t.pus) + " PU(s)"), std::string::npos) << text;
  for (const NumaNode& n : t.numaNodes) {
    EXPECT_NE(text.find("NUMA node " + std::to_string(n.osIndex) + ": "), std::string::npos) << text;
  }
  for (const NetworkDevice& d : t.networkDevices) EXPECT_NE(text.find(d.name), std::string::npos) << text;
  EXPECT_NE(text.find("process binding"), std::string::npos) << text;
}

TEST(Describe, UnknownTopologySaysWhy) {
  HostTopology unknown;
  unknown.unknownReason = "hwloc_topology_load failed: test";
  EXPECT_NE(describe(unknown).find("unknown (hwloc_topology_load failed: test)"), std::string::npos);
}

}  // namespace
}  // namespace weft::topology
