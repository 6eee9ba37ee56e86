// AllReduce, recursive doubling (MPICH's MPIR_Allreduce_intra_recursive_doubling): the latency-bound
// algorithm for small vectors, log2(p) rounds of whole-vector exchanges.
//
// Steps, with pof2 the largest power of two <= p and rem = p - pof2 (PowerOfTwoFold):
//   1. Fold: among the first 2*rem ranks, each even rank sends its vector to the odd rank above it,
//      which reduces it into its own; the even ranks then wait for step 3.
//   2. The pof2 remaining ranks, renumbered 0..pof2-1, exchange their whole partial result with the rank
//      whose new number differs in bit k, for k = 0, 1, ..., and both reduce. After log2(pof2) rounds
//      every one of them holds the full result.
//   3. Unfold: each odd rank of the first 2*rem sends the result to the even rank below it.
// Bit-identical results: both partners of an exchange compute (lower group's value) op (upper group's
// value) with the operands in that order, so they compute the same expression and the groups stay
// identical without relying on the reduction kernel being commutative down to the bit (max(+0, -0)).
//
// Wire, per rank: log2(pof2) * n bytes (n = vector bytes) on the pof2 participants, n more on the odd
// folded ones (step 3); the even folded ranks send n only (step 1).

#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/pipeline.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"

namespace weft {

void allReduceRecursiveDoubling(const CollArgs& args, Channel& channel) {
  const int p = channel.size();
  const int rank = channel.rank();
  const size_t count = args.count;
  const size_t bytes = count * dataTypeSize(args.type);
  if (count == 0) return;
  if (p == 1) {
    if (args.sendbuff != args.recvbuff) copyBytes(args.recvbuff, args.sendbuff, bytes);
    return;
  }

  const PowerOfTwoFold fold(p);
  const int newRank = fold.newRank(rank);
  void* incoming = channel.scratch(0, bytes);
  // This rank's partial result: sendbuff until the first reduction, which writes recvbuff (so the input is
  // never copied; in place both are the same buffer).
  const void* partial = args.sendbuff;

  if (rank < 2 * fold.rem) {
    if (newRank < 0) {
      channel.send(rank + 1, args.sendbuff, bytes);
    } else {
      channel.recv(rank - 1, incoming, bytes);
      reduce(args.recvbuff, incoming, args.sendbuff, count, args.type, args.op);  // the lower rank first
      partial = args.recvbuff;
    }
  }

  if (newRank >= 0) {
    for (int distance = 1; distance < fold.pof2; distance *= 2) {
      const int partnerNewRank = newRank ^ distance;
      const int partner = fold.oldRank(partnerNewRank);
      exchange(channel, partner, partial, bytes, partner, incoming, bytes);
      if (newRank < partnerNewRank) {
        reduce(args.recvbuff, partial, incoming, count, args.type, args.op);
      } else {
        reduce(args.recvbuff, incoming, partial, count, args.type, args.op);
      }
      partial = args.recvbuff;
    }
  }

  if (rank < 2 * fold.rem) {
    if (newRank < 0) {
      channel.recv(rank + 1, args.recvbuff, bytes);
    } else {
      channel.send(rank - 1, args.recvbuff, bytes);
    }
  }
}

}  // namespace weft
