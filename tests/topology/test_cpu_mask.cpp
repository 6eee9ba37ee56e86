// The CPU masks ranks exchange to tell whether they outnumber the CPUs they may run on between them
// (topology::usableCpuMask, topology::cpusCovered): the mask against sched_getaffinity's own count and
// against a mask the test sets, and the union counted by hand.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdint>
#include <vector>

#include "topology/cpu_binding.h"

namespace weft::topology {
namespace {

size_t bitsIn(const std::vector<uint64_t>& mask) {
  size_t n = 0;
  for (uint64_t word : mask)
    for (int bit = 0; bit < 64; ++bit) n += (word >> bit) & 1;
  return n;
}

TEST(CpuMask, AgreesWithTheAffinityCount) {
  const std::vector<uint64_t> mask = usableCpuMask();
  ASSERT_FALSE(mask.empty());
  EXPECT_NE(mask.back(), 0u) << "trailing zero words are left out";
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  EXPECT_EQ(bitsIn(mask), static_cast<size_t>(CPU_COUNT(&cpus)));
  EXPECT_EQ(bitsIn(mask), usableCores());
}

TEST(CpuMask, FollowsTheAffinityTheProcessIsGiven) {
  cpu_set_t saved;
  CPU_ZERO(&saved);
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  int last = -1;  // the highest CPU this process may use: its bit is in the last word
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &saved)) last = cpu;
  ASSERT_GE(last, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const std::vector<uint64_t> mask = usableCpuMask();
  const size_t count = usableCores();
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);  // before any assertion can return
  std::vector<uint64_t> expected(static_cast<size_t>(last / 64 + 1), 0);
  expected.back() = uint64_t{1} << (last % 64);
  EXPECT_EQ(mask, expected);
  EXPECT_EQ(count, 1u);
}

TEST(CpuMask, CoveredCountsEachCpuOnce) {
  const std::vector<uint64_t> first{0b0011}, second{0b0110}, alone{0b0001}, far{0, uint64_t{1} << 63}, none;
  EXPECT_EQ(cpusCovered({&first, &second}), 3u);  // CPUs 0, 1, 2
  EXPECT_EQ(cpusCovered({&alone, &alone}), 1u);   // two ranks on one CPU (taskset -c 0)
  EXPECT_EQ(cpusCovered({&alone, &far}), 2u);     // masks of different lengths: CPUs 0 and 127
  EXPECT_EQ(cpusCovered({&first}), 2u);
  EXPECT_EQ(cpusCovered({&first, &none}), 0u);  // one rank's CPUs not known: not known
  EXPECT_EQ(cpusCovered({}), 0u);
}

}  // namespace
}  // namespace weft::topology
