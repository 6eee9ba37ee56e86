// RangeSet (fusion/footprint.h), the union of byte ranges that fusion and plans check dependencies with,
// against a plain list of every range added: in the orders calls come in (ascending and descending
// addresses), at random, with ranges that touch, overlap and contain each other, and after clear().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "fusion/footprint.h"

namespace weft {
namespace {

// Whether any range of `added` overlaps r: what the union must answer.
bool referenceOverlaps(const std::vector<Range>& added, const Range& r) {
  return std::any_of(added.begin(), added.end(), [&](const Range& a) { return a.overlaps(r); });
}

// Adds `ranges` in order, asking after each addition about every range in [0, limit) of a few lengths.
void expectMatchesReference(RangeSet& set, const std::vector<Range>& ranges, uintptr_t limit) {
  std::vector<Range> added;
  for (const Range& r : ranges) {
    set.add(r);
    added.push_back(r);
  }
  for (uintptr_t begin = 0; begin < limit; ++begin) {
    for (uintptr_t length : {1, 2, 5, 17}) {
      const Range query{begin, begin + length};
      ASSERT_EQ(set.overlaps(query), referenceOverlaps(added, query))
          << "[" << query.begin << ", " << query.end << ")";
    }
  }
}

// `count` ranges of 3 bytes, 5 apart (a gap between any two), in ascending order of address.
std::vector<Range> apart(size_t count) {
  std::vector<Range> ranges;
  for (uintptr_t i = 0; i < count; ++i) ranges.push_back({10 + 5 * i, 13 + 5 * i});
  return ranges;
}

TEST(RangeSet, EmptyOverlapsNothing) {
  RangeSet set;
  EXPECT_FALSE(set.overlaps({0, 100}));
  set.add({5, 5});  // an empty range adds nothing
  EXPECT_FALSE(set.overlaps({0, 100}));
  set.add({5, 6});
  EXPECT_FALSE(set.overlaps({6, 6}));  // nor is an empty query ever overlapped
  EXPECT_TRUE(set.overlaps({5, 6}));
}

TEST(RangeSet, AscendingDescendingAndMiddleInsertions) {
  const std::vector<Range> ascending = apart(300);
  std::vector<Range> descending(ascending.rbegin(), ascending.rend());
  std::vector<Range> inward;  // alternately from both ends: every insertion lands in the middle
  for (size_t lo = 0, hi = ascending.size(); lo < hi;) {
    inward.push_back(ascending[lo++]);
    if (lo < hi) inward.push_back(ascending[--hi]);
  }
  std::reverse(inward.begin(), inward.end());
  for (const std::vector<Range>* order :
       std::initializer_list<const std::vector<Range>*>{&ascending, &descending, &inward}) {
    RangeSet set;
    expectMatchesReference(set, *order, 10 + 5 * 300 + 10);
  }
}

TEST(RangeSet, TouchingOverlappingAndContainingRangesMerge) {
  RangeSet set;
  expectMatchesReference(
      set, {{10, 20}, {30, 40}, {20, 30}, {50, 60}, {45, 55}, {70, 75}, {0, 100}, {120, 130}, {125, 126}}, 140);
}

TEST(RangeSet, RandomRangesMatchTheReference) {
  std::mt19937_64 random(20261127);
  for (int trial = 0; trial < 50; ++trial) {
    std::uniform_int_distribution<uintptr_t> start(0, 400);
    std::uniform_int_distribution<uintptr_t> length(1, trial % 2 == 0 ? 4 : 40);
    std::vector<Range> ranges;
    for (int i = 0; i < 60; ++i) {
      const uintptr_t b = start(random);
      ranges.push_back({b, b + length(random)});
    }
    RangeSet set;
    expectMatchesReference(set, ranges, 460);
  }
}

TEST(RangeSet, ClearForgetsEveryRangeAndTheSetIsReusable) {
  RangeSet set;
  expectMatchesReference(set, apart(100), 520);
  set.clear();
  EXPECT_FALSE(set.overlaps({0, 1000}));
  const std::vector<Range> again = apart(40);
  expectMatchesReference(set, {again.rbegin(), again.rend()}, 220);
}

}  // namespace
}  // namespace weft
