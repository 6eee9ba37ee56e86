// Rabenseifner's algorithms (MPICH's MPIR_Allreduce_intra_reduce_scatter_allgather and
// MPIR_Reduce_scatter_intra_recursive_halving): the ring's bytes in 2 log2(p) rounds instead of 2(p-1).
//
// Non-powers of two are folded first (PowerOfTwoFold: the first 2*rem ranks pair up, each even rank
// hands its whole input to the odd rank above and sits out). The pof2 remaining ranks ("participants",
// renumbered 0..pof2-1) split the vector into pof2 contiguous blocks, block i being participant i's, and:
//   1. Reduce-scatter by recursive halving: at distances d = pof2/2, pof2/4, ..., 1, a participant and
//      the one whose new number differs in bit d split the range of blocks they are both responsible
//      for; each sends the half the other keeps and reduces the half it keeps. Afterwards participant i
//      holds block i reduced over all ranks.
//   2. (AllReduce) AllGather by recursive doubling, the same exchanges in reverse order (d = 1, 2, ...):
//      each participant sends the blocks it has to its partner and receives the partner's.
// Each element is reduced in one place per round (the partners order the operands alike anyway) and
// then gathered by copying, so AllReduce results are bit-identical everywhere.
//
// AllReduce splits `count` into pof2 nearly equal blocks (some empty when count < pof2) and finally
// sends the result from each odd folded rank to the even one. Wire, per participant: 2 (n - its block),
// about 2 (pof2-1)/pof2 * n (n = vector bytes); plus n more on each of the 2*rem folded ranks.
// ReduceScatter's output blocks are the p input blocks of `count`: participant i's block is the output of
// the one or two ranks it stands for, and a folded odd rank finally sends its even neighbour that
// neighbour's output. Wire, per participant: n - its block (n = p * count * element size); an even
// folded rank sends n, and its odd neighbour count * element size more.
// Copies: none of the input. The first halving round sends from sendbuff and reduces its kept half from
// sendbuff and the partner's half (at 2 ranks straight into recvbuff); copying the input first cost 1.6x at
// 2 ranks and 8 MiB over tcp.
// Pipelining: over tcp every exchange goes in segments (exchangeInSegments, pipeline.h), and a halving round
// reduces each incoming segment as it arrives, from kSegmentsInFlight scratch slots. Whole halves cost
// 1.5-1.7x from 8 MiB at 2 ranks over tcp (2-vCPU Xeon: a 4 MiB half went through the socket buffers and back
// from memory), the same bytes the segmented ring moves at its speed. Over shm they go whole (one CMA copy).
#include <algorithm>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/pipeline.h"
#include "core/algorithms/small_vector.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"

namespace weft {
namespace {

// The participants' block starts (one more than participants): up to 64 participants without allocating.
using BlockStarts = SmallVector<size_t, 65>;

// What the halving and doubling rounds share. Participant i's block is elements [start[i], start[i+1])
// of `vector`, which holds this participant's partial result.
struct Participants {
  const PowerOfTwoFold& fold;
  int newRank;
  const BlockStarts& start;
  char* vector;
  size_t elemSize;

  char* blocksAt(size_t first) const { return elementAt(vector, start[first], elemSize); }
  size_t bytesOf(size_t first, size_t last) const { return (start[last] - start[first]) * elemSize; }
  // Most bytes a participant receives in one halving round: half of all blocks, in the first round.
  size_t largestHalfBytes() const {
    const size_t half = fold.pof2 / 2;
    return std::max(bytesOf(0, half), bytesOf(half, fold.pof2));
  }
  // The halving rounds' slot for one incoming segment: a segment, or less for a short vector.
  size_t slotBytes() const { return std::min(segmentBytes(elemSize), largestHalfBytes()); }
  // Their scratch: kSegmentsInFlight slots, or a whole half where a transport does not cut messages
  // (Channel::cutsLargeMessages) and the half arrives in one piece at the first slot.
  size_t slotsBytes() const { return std::max(kSegmentsInFlight * slotBytes(), largestHalfBytes()); }
};

// `input` holds this participant's contribution at the vector's offsets: the caller's sendbuff (read-only), or
// the vector itself when a fold already reduced into it. The first round reads it, so that no copy of the
// input into the vector is needed (at 2 ranks the one round reads nothing else); each round writes the half
// it keeps into the vector, and later rounds read the vector. `ownBlock`, when not null, takes the last
// round's result (this participant's block) instead of the vector. The partner's half arrives in `slots`
// (group.slotsBytes()): in segments, one per slot of kSegmentsInFlight, each reduced as soon as it is there;
// or whole, at the first slot, where the transport does not cut messages.
void reduceScatterByHalving(const Participants& group, const char* input, char* slots, char* ownBlock,
                            const CollArgs& args, Channel& channel) {
  const size_t slotBytes = group.slotBytes();
  const char* from = input;
  size_t first = 0;  // this participant's range of blocks is [first, first + 2 * distance)
  for (int distance = group.fold.pof2 / 2; distance >= 1; distance /= 2) {
    const int partnerNewRank = group.newRank ^ distance;
    const bool lower = group.newRank < partnerNewRank;
    const size_t kept = lower ? first : first + distance;
    const size_t given = lower ? first + distance : first;
    // The lower participant's partial result first, as on the partner for the half it keeps.
    const char* mine = elementAt(from, group.start[kept], group.elemSize);
    char* result = distance == 1 && ownBlock != nullptr ? ownBlock : group.blocksAt(kept);
    auto slot = [&](size_t segment) { return slots + (segment % kSegmentsInFlight) * slotBytes; };
    auto inSlot = [&](size_t segment, size_t, size_t bytes, MessagePieces& out) {
      out[0] = {slot(segment), bytes};
      return std::span<const BufferPiece>(out.data(), 1);
    };
    auto reduceSegment = [&](size_t segment, size_t offset, size_t bytes) {
      const size_t n = bytes / group.elemSize;
      if (lower) {
        reduce(result + offset, mine + offset, slot(segment), n, args.type, args.op);
      } else {
        reduce(result + offset, slot(segment), mine + offset, n, args.type, args.op);
      }
    };
    const int partner = group.fold.oldRank(partnerNewRank);
    const BufferPiece outgoing{const_cast<char*>(elementAt(from, group.start[given], group.elemSize)),
                               group.bytesOf(given, given + distance)};  // only read
    exchangeInSegments(channel, partner, {&outgoing, 1}, partner, group.bytesOf(kept, kept + distance),
                       group.elemSize, inSlot, reduceSegment);
    from = group.vector;
    first = kept;
  }
}

void allGatherByDoubling(const Participants& group, Channel& channel) {
  for (int distance = 1; distance < group.fold.pof2; distance *= 2) {
    const int partnerNewRank = group.newRank ^ distance;
    // Before this round each participant holds the `distance` blocks of its aligned group of that size.
    const size_t mine = group.newRank & ~(distance - 1);
    const size_t theirs = partnerNewRank & ~(distance - 1);
    const int partner = group.fold.oldRank(partnerNewRank);
    exchangeInSegments(channel, partner, group.blocksAt(mine), group.bytesOf(mine, mine + distance),
                       group.blocksAt(theirs), group.bytesOf(theirs, theirs + distance), group.elemSize);
  }
}

}  // namespace

void allReduceRabenseifner(const CollArgs& args, Channel& channel) {
  const int p = channel.size();
  const int rank = channel.rank();
  const size_t elemSize = dataTypeSize(args.type);
  const size_t count = args.count;
  const size_t bytes = count * elemSize;
  if (count == 0) return;
  if (p == 1) {
    if (args.sendbuff != args.recvbuff) copyBytes(args.recvbuff, args.sendbuff, bytes);
    return;
  }

  const PowerOfTwoFold fold(p);
  const int newRank = fold.newRank(rank);
  const bool folded = rank < 2 * fold.rem;
  if (newRank < 0) {
    channel.send(rank + 1, args.sendbuff, bytes);
    channel.recv(rank + 1, args.recvbuff, bytes);
    return;
  }

  // recvbuff holds this rank's partial result: the halving rounds reduce into it from sendbuff (or, folded,
  // the fold does), so sendbuff is never copied.
  const Partition blocks(count, fold.pof2);
  BlockStarts start;
  start.assign(static_cast<size_t>(fold.pof2) + 1);
  for (int i = 0; i <= fold.pof2; ++i) start[i] = blocks.offset(i);
  const Participants group{fold, newRank, start, static_cast<char*>(args.recvbuff), elemSize};
  char* incoming =
      static_cast<char*>(channel.scratch(0, folded ? std::max(bytes, group.slotsBytes()) : group.slotsBytes()));

  const char* input = static_cast<const char*>(args.sendbuff);
  if (folded) {
    channel.recv(rank - 1, incoming, bytes);
    reduce(args.recvbuff, incoming, args.sendbuff, count, args.type, args.op);  // the lower rank first
    input = group.vector;
  }
  reduceScatterByHalving(group, input, incoming, nullptr, args, channel);
  allGatherByDoubling(group, channel);
  if (folded) channel.send(rank - 1, args.recvbuff, bytes);
}

void reduceScatterRabenseifner(const CollArgs& args, Channel& channel) {
  const int p = channel.size();
  const int rank = channel.rank();
  const size_t elemSize = dataTypeSize(args.type);
  const size_t count = args.count;
  const size_t outputBytes = count * elemSize;
  const size_t inputBytes = p * outputBytes;
  if (count == 0) return;
  const char* ownOutput = elementAt(args.sendbuff, rank * count, elemSize);
  if (p == 1) {
    if (ownOutput != args.recvbuff) copyBytes(args.recvbuff, ownOutput, outputBytes);
    return;
  }

  const PowerOfTwoFold fold(p);
  const int newRank = fold.newRank(rank);
  const bool folded = rank < 2 * fold.rem;
  if (newRank < 0) {
    channel.send(rank + 1, args.sendbuff, inputBytes);
    channel.recv(rank + 1, args.recvbuff, outputBytes);
    return;
  }

  // Participant i stands for ranks 2i and 2i+1 when folded, else for rank i + rem; their output blocks
  // are adjacent, so its block is one contiguous range.
  BlockStarts start;
  start.assign(static_cast<size_t>(fold.pof2) + 1);
  for (int i = 0; i <= fold.pof2; ++i) start[i] = static_cast<size_t>(i < fold.rem ? 2 * i : i + fold.rem) * count;
  // sendbuff is read-only and recvbuff too small: the partial results live in scratch. The first halving
  // round reads sendbuff itself (or, folded, the fold's sum), and a participant that stands for itself alone
  // reduces the last round straight into recvbuff.
  // (At 2 participants the one round goes from sendbuff to recvbuff, and needs none.)
  char* partial = folded || fold.pof2 > 2 ? static_cast<char*>(channel.scratch(1, inputBytes)) : nullptr;
  const Participants group{fold, newRank, start, partial, elemSize};
  char* incoming = static_cast<char*>(
      channel.scratch(0, folded ? std::max(inputBytes, group.slotsBytes()) : group.slotsBytes()));

  if (folded) {
    channel.recv(rank - 1, incoming, inputBytes);
    reduce(partial, incoming, args.sendbuff, p * count, args.type, args.op);  // the lower rank first
    reduceScatterByHalving(group, partial, incoming, nullptr, args, channel);
    channel.send(rank - 1, elementAt(partial, (rank - 1) * count, elemSize), outputBytes);
    copyBytes(args.recvbuff, elementAt(partial, rank * count, elemSize), outputBytes);
  } else {
    reduceScatterByHalving(group, static_cast<const char*>(args.sendbuff), incoming,
                           static_cast<char*>(args.recvbuff), args, channel);
  }
}

}  // namespace weft
