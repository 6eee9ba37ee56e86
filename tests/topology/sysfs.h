// Facts about this machine read straight from Linux (/sys, /proc, sched_getaffinity), as the independent
// reference the topology tests compare hwloc's discovery against.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace weft::testing {

// Parses a kernel CPU or node list ("0-3,8,10-11").
std::set<unsigned> parseList(const std::string& text);
// A list back in kernel form, for messages and for comparing with hwloc's lists.
std::string formatList(const std::set<unsigned>& items);
// First line of a file; empty when it cannot be read.
std::string readLine(const std::string& path);

// Online CPUs limited to this process's cgroup cpuset when one is in force (hwloc shows only those).
std::set<unsigned> usableCpus();
// NUMA nodes online and, under a cgroup, allowed to this process.
std::set<unsigned> usableNumaNodes();
// CPUs of NUMA node `node` (its cpulist), limited to usableCpus().
std::set<unsigned> numaNodeCpus(unsigned node);
// The calling thread's affinity (sched_getaffinity).
std::set<unsigned> threadAffinity();
// Entries of /sys/class/<cls> whose device sits on a PCI bus, with their /sys/devices path.
std::vector<std::pair<std::string, std::string>> pciClassEntries(const std::string& cls);

}  // namespace weft::testing
