// HostLayout: hosts numbered by their lowest rank, local indices, and the orders hierarchical algorithms
// and the ring use, against layouts written out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/host_layout.h"

namespace weft {
namespace {

TEST(HostLayout, NumbersHostsByTheirLowestRank) {
  const std::vector<std::string> ids = {"b", "a", "b", "c", "a"};
  const HostLayout layout = HostLayout::fromHostIds(ids);
  EXPECT_EQ(layout.numRanks(), 5);
  EXPECT_EQ(layout.numHosts(), 3);
  const int expectedHost[] = {0, 1, 0, 2, 1};
  const int expectedIndex[] = {0, 0, 1, 0, 1};
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(layout.hostOf(r), expectedHost[r]) << r;
    EXPECT_EQ(layout.localIndex(r), expectedIndex[r]) << r;
  }
  EXPECT_EQ(layout.ranksOn(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(layout.ranksOn(1), (std::vector<int>{1, 4}));
  EXPECT_EQ(layout.ranksOn(2), (std::vector<int>{3}));
  EXPECT_FALSE(layout.uniform());
  EXPECT_FALSE(layout.contiguous());
  EXPECT_EQ(layout.hostOrder(), (std::vector<int>{0, 2, 1, 4, 3}));
}

TEST(HostLayout, UniformAndContiguous) {
  const std::vector<int> blocks = {7, 7, 3, 3, 9, 9};
  const HostLayout a = HostLayout::fromHostOf(blocks);
  EXPECT_TRUE(a.uniform());
  EXPECT_TRUE(a.contiguous());
  EXPECT_EQ(a.hostOrder(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(a.ranksWithIndex(1), (std::vector<int>{1, 3, 5}));

  const std::vector<int> alternate = {0, 1, 0, 1};
  const HostLayout b = HostLayout::fromHostOf(alternate);
  EXPECT_TRUE(b.uniform());
  EXPECT_FALSE(b.contiguous());
  EXPECT_EQ(b.hostOrder(), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(b.ranksWithIndex(0), (std::vector<int>{0, 1}));
  EXPECT_EQ(b.ranksWithIndex(1), (std::vector<int>{2, 3}));

  const std::vector<std::string> one = {"h", "h", "h"};
  const HostLayout c = HostLayout::fromHostIds(one);
  EXPECT_EQ(c.numHosts(), 1);
  EXPECT_TRUE(c.uniform());
  EXPECT_TRUE(c.contiguous());
}

}  // namespace
}  // namespace weft
