// Cutting an operation into MPI-sized pieces: MPI counts are int, Weft's are size_t. An element-wise
// collective (AllReduce, Broadcast, Reduce) over count elements is the same collective over consecutive
// pieces of at most maxPiece elements each. Header-only so that the unit test checks the very code.
#ifndef WEFT_PLUGINS_MPI_PIECES_H
#define WEFT_PLUGINS_MPI_PIECES_H

#include <algorithm>
#include <cstddef>

namespace weft::mpi {

// How many pieces of at most maxPiece (>= 1) elements cover count elements (0 for count 0).
constexpr size_t pieceCount(size_t count, size_t maxPiece) { return count / maxPiece + (count % maxPiece != 0); }

// Calls f(offset, n) for each piece in order, n in [1, maxPiece], offsets contiguous from 0 to count.
// Stops at the first piece for which f returns false and returns false then.
template <typename F>
bool forEachPiece(size_t count, size_t maxPiece, F&& f) {
  for (size_t offset = 0; offset < count; offset += maxPiece) {
    if (!f(offset, std::min(maxPiece, count - offset))) return false;
  }
  return true;
}

}  // namespace weft::mpi

#endif  // WEFT_PLUGINS_MPI_PIECES_H
