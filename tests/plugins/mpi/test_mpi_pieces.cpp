// The splitting of an operation into MPI-sized pieces (plugins/mpi/mpi_pieces.h), the logic that lets
// counts above INT_MAX pass: checked against a plain walk over the elements, including counts above
// INT_MAX (no memory needed: only offsets are checked).
#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <vector>

#include "mpi_pieces.h"

namespace {

using weft::mpi::forEachPiece;
using weft::mpi::pieceCount;

// Walks the pieces and checks they tile [0, count) in order, each of 1..maxPiece elements.
size_t walk(size_t count, size_t maxPiece) {
  size_t next = 0;
  size_t pieces = 0;
  forEachPiece(count, maxPiece, [&](size_t offset, size_t n) {
    EXPECT_EQ(offset, next);
    EXPECT_GE(n, 1U);
    EXPECT_LE(n, maxPiece);
    next = offset + n;
    ++pieces;
    return true;
  });
  EXPECT_EQ(next, count);
  return pieces;
}

TEST(MpiPieces, TileTheRangeInOrder) {
  for (size_t maxPiece : {size_t{1}, size_t{2}, size_t{3}, size_t{1000}}) {
    for (size_t count :
         {size_t{0}, size_t{1}, size_t{2}, size_t{999}, size_t{1000}, size_t{1001}, size_t{10007}}) {
      size_t expected = 0;
      for (size_t covered = 0; covered < count; covered += maxPiece) ++expected;  // the plain walk
      EXPECT_EQ(walk(count, maxPiece), expected) << count << " / " << maxPiece;
      EXPECT_EQ(pieceCount(count, maxPiece), expected) << count << " / " << maxPiece;
    }
  }
}

TEST(MpiPieces, CountsAboveIntMaxFitMpiInts) {
  const auto intMax = static_cast<size_t>(INT_MAX);
  EXPECT_EQ(walk(intMax, intMax), 1U);
  EXPECT_EQ(walk(intMax + 1, intMax), 2U);
  EXPECT_EQ(walk(3 * intMax + 5, intMax), 4U);
  std::vector<size_t> sizes;
  forEachPiece(intMax + 4099, intMax, [&](size_t, size_t n) {
    sizes.push_back(n);
    return true;
  });
  ASSERT_EQ(sizes.size(), 2U);
  EXPECT_EQ(sizes[0], intMax);
  EXPECT_EQ(sizes[1], 4099U);
}

TEST(MpiPieces, StopsAtTheFirstFailure) {
  size_t calls = 0;
  EXPECT_FALSE(forEachPiece(100, 10, [&](size_t offset, size_t) {
    ++calls;
    return offset < 30;
  }));
  EXPECT_EQ(calls, 4U);
}

}  // namespace
