// A stream's worker thread runs on the NUMA node(s) of the process's CPUs when the process is bound, and
// keeps the process's (full) mask when it is not. Each case runs in a forked child whose affinity the test
// sets with sched_setaffinity; the worker reports its own mask through sched_getaffinity, and the expected
// mask comes from /sys/devices/system/node/node*/cpulist.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "core/stream/stream.h"
#include "sysfs.h"

namespace weft::topology {
namespace {

using weft::testing::formatList;

// Runs a child bound to `cpus` (unchanged when empty), creates a stream there and returns the CPU list the
// stream's worker thread reports for itself.
std::string streamWorkerAffinityInChild(const std::set<unsigned>& cpus) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (!cpus.empty()) {
      cpu_set_t mask;
      CPU_ZERO(&mask);
      for (unsigned cpu : cpus) CPU_SET(cpu, &mask);
      // Every thread of the child, not only this one: the process's binding is the union of its threads',
      // and a sanitizer's runtime keeps a thread of its own (ThreadSanitizer's survives fork).
      DIR* tasks = opendir("/proc/self/task");
      if (tasks == nullptr) _exit(3);
      for (const dirent* task; (task = readdir(tasks)) != nullptr;) {
        if (task->d_name[0] == '.') continue;
        if (sched_setaffinity(static_cast<pid_t>(std::atoi(task->d_name)), sizeof(mask), &mask) != 0) _exit(3);
      }
      closedir(tasks);
    }
    std::string seen = "none";
    {
      weftStream stream;
      stream.enqueue([&seen] { seen = formatList(weft::testing::threadAffinity()); });
      stream.synchronize();
    }
    bool written = write(fds[1], seen.data(), seen.size()) == static_cast<ssize_t>(seen.size());
    _exit(written ? 0 : 4);
  }
  close(fds[1]);
  std::string out;
  char buffer[256];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;) out.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed with status " + std::to_string(status);
  return out;
}

// NUMA nodes that hold at least one of `cpus`, and all their usable CPUs.
std::set<unsigned> cpusOfNodesHolding(const std::set<unsigned>& cpus) {
  std::set<unsigned> result;
  for (unsigned node : weft::testing::usableNumaNodes()) {
    std::set<unsigned> nodeCpus = weft::testing::numaNodeCpus(node);
    bool holds = false;
    for (unsigned cpu : cpus) holds = holds || nodeCpus.count(cpu) > 0;
    if (holds) result.insert(nodeCpus.begin(), nodeCpus.end());
  }
  return result;
}

TEST(ThreadBinding, UnboundProcessLeavesTheWorkerUnbound) {
  std::set<unsigned> usable = weft::testing::usableCpus();
  if (weft::testing::threadAffinity() != usable) {
    GTEST_SKIP() << "SKIP: this test process is itself bound to " << formatList(weft::testing::threadAffinity())
                 << " of " << formatList(usable) << "; run it unbound";
  }
  EXPECT_EQ(streamWorkerAffinityInChild({}), formatList(usable));
}

// Bound to one CPU of a NUMA node that has several: the worker gets the whole node, which it could not
// have inherited.
TEST(ThreadBinding, BoundProcessPutsTheWorkerOnItsNumaNode) {
  std::set<unsigned> usable = weft::testing::usableCpus();
  std::optional<unsigned> chosen;
  for (unsigned cpu : usable) {
    if (cpusOfNodesHolding({cpu}).size() > 1) {
      chosen = cpu;
      break;
    }
  }
  if (!chosen) {
    GTEST_SKIP() << "SKIP: no NUMA node has two usable CPUs (usable: " << formatList(usable)
                 << "), so binding to a node cannot be told apart from inheriting one CPU";
  }
  std::set<unsigned> expected = cpusOfNodesHolding({*chosen});
  EXPECT_EQ(streamWorkerAffinityInChild({*chosen}), formatList(expected)) << "process bound to CPU " << *chosen;
}

// Bound to CPUs on two NUMA nodes: the worker gets both nodes.
TEST(ThreadBinding, ProcessAcrossTwoNodesGivesBothNodes) {
  std::vector<unsigned> firstCpus;  // the first usable CPU of each NUMA node that has one
  for (unsigned node : weft::testing::usableNumaNodes()) {
    std::set<unsigned> cpus = weft::testing::numaNodeCpus(node);
    if (!cpus.empty()) firstCpus.push_back(*cpus.begin());
  }
  if (firstCpus.size() < 2) GTEST_SKIP() << "SKIP: fewer than two NUMA nodes with CPUs on this machine";
  std::set<unsigned> bound = {firstCpus[0], firstCpus[1]};
  std::set<unsigned> expected = cpusOfNodesHolding(bound);
  if (expected == weft::testing::usableCpus()) {
    GTEST_SKIP() << "SKIP: two NUMA nodes are the whole machine: the process would count as unbound";
  }
  EXPECT_EQ(streamWorkerAffinityInChild(bound), formatList(expected)) << "process bound to " << formatList(bound);
}

}  // namespace
}  // namespace weft::topology
