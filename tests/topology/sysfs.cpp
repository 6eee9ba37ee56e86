#include "sysfs.h"

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace weft::testing {
namespace fs = std::filesystem;

std::set<unsigned> parseList(const std::string& text) {
  std::set<unsigned> items;
  std::stringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    if (part.empty() || part == "\n") continue;
    size_t dash = part.find('-');
    unsigned first = std::stoul(part.substr(0, dash));
    unsigned last = dash == std::string::npos ? first : std::stoul(part.substr(dash + 1));
    for (unsigned i = first; i <= last; ++i) items.insert(i);
  }
  return items;
}

std::string formatList(const std::set<unsigned>& items) {
  std::string text;
  for (auto it = items.begin(); it != items.end();) {
    unsigned first = *it;
    unsigned last = first;
    for (++it; it != items.end() && *it == last + 1; ++it) last = *it;
    if (!text.empty()) text += ',';
    text += std::to_string(first);
    if (last != first) text.append("-").append(std::to_string(last));
  }
  return text;
}

std::string readLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

namespace {

// The cgroup v2 folder of this process, where cpuset.*.effective live; empty when not cgroup v2.
std::string cgroupFolder() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  }
  return {};
}

std::set<unsigned> limitedByCgroup(std::set<unsigned> items, const char* file) {
  std::string folder = cgroupFolder();
  if (folder.empty()) return items;
  std::string limit = readLine(folder + "/" + file);
  if (limit.empty()) return items;
  std::set<unsigned> allowed = parseList(limit);
  std::set<unsigned> both;
  for (unsigned i : items) {
    if (allowed.count(i)) both.insert(i);
  }
  return both;
}

}  // namespace

std::set<unsigned> usableCpus() {
  return limitedByCgroup(parseList(readLine("/sys/devices/system/cpu/online")), "cpuset.cpus.effective");
}

std::set<unsigned> usableNumaNodes() {
  std::set<unsigned> online = parseList(readLine("/sys/devices/system/node/online"));
  if (online.empty()) online.insert(0);  // kernels without NUMA support show one node to hwloc
  return limitedByCgroup(online, "cpuset.mems.effective");
}

std::set<unsigned> numaNodeCpus(unsigned node) {
  std::string path = "/sys/devices/system/node/node" + std::to_string(node) + "/cpulist";
  std::set<unsigned> usable = usableCpus();
  if (!fs::exists(path)) return usable;  // no NUMA support: one node holds every CPU
  std::set<unsigned> cpus;
  for (unsigned cpu : parseList(readLine(path))) {
    if (usable.count(cpu)) cpus.insert(cpu);
  }
  return cpus;
}

std::set<unsigned> threadAffinity() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  std::set<unsigned> cpus;
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return cpus;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) cpus.insert(cpu);
  }
  return cpus;
}

std::vector<std::pair<std::string, std::string>> pciClassEntries(const std::string& cls) {
  std::vector<std::pair<std::string, std::string>> entries;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator("/sys/class/" + cls, error)) {
    std::error_code unresolved;
    std::string device = fs::canonical(entry.path(), unresolved).string();
    if (!unresolved && device.rfind("/sys/devices/pci", 0) == 0) {
      entries.emplace_back(entry.path().filename().string(), device);
    }
  }
  return entries;
}

}  // namespace weft::testing
