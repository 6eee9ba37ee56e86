// Arithmetic the algorithms share: splitting a vector into nearly equal blocks, addressing elements by
// index, and folding a rank count that is not a power of two onto the largest power of two below it.
#pragma once

#include <algorithm>
#include <cstddef>

namespace weft {

inline size_t ceilDiv(size_t a, size_t b) { return (a + b - 1) / b; }

// Rank arithmetic on a ring of p ranks: the result is in [0, p) for any a > -p.
inline int ringIndex(int a, int p) { return (a % p + p) % p; }

// `count` elements split into `parts` nearly equal blocks, in order: the first count % parts blocks hold
// one element more than the rest, so sizes differ by at most one and a block is empty when count < parts.
// Every rank computes the same split, which is what makes the sizes of matching sends and receives agree.
class Partition {
 public:
  Partition(size_t count, size_t parts) : base_(count / parts), extra_(count % parts) {}
  size_t count(size_t block) const { return base_ + (block < extra_ ? 1 : 0); }
  size_t offset(size_t block) const { return block * base_ + std::min(block, extra_); }
  size_t largest() const { return base_ + (extra_ != 0 ? 1 : 0); }

 private:
  size_t base_;
  size_t extra_;
};

// Address of element `index` in a buffer of `elemSize`-byte elements.
inline char* elementAt(void* base, size_t index, size_t elemSize) {
  return static_cast<char*>(base) + index * elemSize;
}
inline const char* elementAt(const void* base, size_t index, size_t elemSize) {
  return static_cast<const char*>(base) + index * elemSize;
}

// MPICH's treatment of a rank count p that is not a power of two, for the recursive algorithms: with
// pof2 the largest power of two <= p and rem = p - pof2, the first 2*rem ranks pair up; each even rank
// of a pair hands its data to the odd one and sits the recursive part out. The pof2 remaining ranks are
// renumbered 0..pof2-1 ("new ranks"), run the algorithm, and the odd ranks finally pass the result back.
struct PowerOfTwoFold {
  explicit PowerOfTwoFold(int size) {
    while (pof2 * 2 <= size) pof2 *= 2;
    rem = size - pof2;
  }
  // The new rank of `rank`, or -1 when it is an even rank folded into its odd neighbour.
  int newRank(int rank) const {
    if (rank < 2 * rem) return rank % 2 == 1 ? rank / 2 : -1;
    return rank - rem;
  }
  int oldRank(int newRank) const { return newRank < rem ? 2 * newRank + 1 : newRank + rem; }

  int pof2 = 1;
  int rem = 0;
};

}  // namespace weft
