// AllReduce, ring (Gloo's allreduce_ring_chunked, NCCL's ring).
//
// The vector is cut into p nearly equal blocks (Partition); block b ends up reduced on rank b. Ranks
// form a ring, each sending to rank+1 and receiving from rank-1. Steps:
//   1. Reduce-scatter, p-1 steps: at step s rank r sends block (r-s-1) mod p and receives block
//      (r-s-2) mod p, which it reduces with its own input into recvbuff; that partial result is what it
//      sends on at step s+1. After step p-2, rank r holds block r reduced over all ranks.
//   2. AllGather, p-1 steps: the reduced blocks go once more round the ring, stored as they arrive and
//      forwarded at the next step.
// Each element is reduced in one place (block b on rank b, as an ordered chain of reductions) and then
// only copied, so every rank ends bit-identical.
//
// Pipelining: each block is cut into segments of at most gPipelineSegmentBytes. Segment k of the block
// received at step s is forwarded as segment k of step s+1 as soon as it has been received and reduced,
// with up to kSegmentsInFlight receives posted ahead, so the wire carries later segments while earlier
// ones are reduced, and the two phases overlap. Large vectors go in rounds (NCCL's loop): each round runs
// both phases on the next kSegmentsInFlight segments of every block, which keeps the sends of a round's
// first step within the receiver's window (pipeline.h).
//
// A fused AllReduce's calls (CollArgs::calls) run the same steps over their own buffers: segments that span
// calls go as vectored messages, and each call's part is reduced where it lies (vector_layout.h).
//
// Wire, per rank: 2(p-1) steps of n/p bytes, 2(p-1)/p * n in all (n = vector bytes), in segments.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/pipeline.h"
#include "core/algorithms/vector_layout.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {

class RingAllReduce {
 public:
  RingAllReduce(const CollArgs& args, Channel& channel)
      : args_(args),
        channel_(channel),
        p_(channel.size()),
        rank_(channel.rank()),
        elemSize_(dataTypeSize(args.type)),
        blocks_(args.count, p_),
        segmentsPerBlock_(ceilDiv(blocks_.largest(), segmentElements(elemSize_))),
        slotBytes_(ceilDiv(blocks_.largest(), segmentsPerBlock_) * elemSize_),
        slots_(static_cast<char*>(channel.scratch(0, kSegmentsInFlight * slotBytes_))),
        layout_(args, false, false) {}

  void run() {
    for (size_t first = 0; first < segmentsPerBlock_; first += kSegmentsInFlight) {
      round(first, std::min(kSegmentsInFlight, segmentsPerBlock_ - first));
    }
  }

 private:
  struct Range {
    size_t offset;  // elements into the vector
    size_t count;
  };

  // The block rank r sends at step s (of 2(p-1)); it receives at step s the block it sends at step s+1.
  size_t sentBlock(size_t step) const { return ringIndex(rank_ - static_cast<int>(step) - 1, p_); }
  size_t receivedBlock(size_t step) const { return sentBlock(step + 1); }
  Range segmentOf(size_t block, size_t segment) const {
    const Partition segments(blocks_.count(block), segmentsPerBlock_);
    return Range{blocks_.offset(block) + segments.offset(segment), segments.count(segment)};
  }

  // Both phases over segments [first, first + m) of every block. Message i of the round is segment
  // first + i % m of step i / m.
  void round(size_t first, size_t m) {
    const size_t reduceSteps = p_ - 1;
    const size_t totalSteps = 2 * reduceSteps;
    const size_t messages = totalSteps * m;
    // At most (p-1)m ahead: the receives posted at the start are then all reduce-scatter ones, and an
    // allgather segment, which lands where this rank sent the same segment from p steps earlier (in place,
    // sendbuff is recvbuff), is posted only after a wait has completed that send.
    const size_t inFlight = std::min(kSegmentsInFlight, reduceSteps * m);
    const int right = ringIndex(rank_ + 1, p_);
    const int left = ringIndex(rank_ - 1, p_);
    auto slotOf = [&](size_t i) { return slots_ + (i % inFlight) * slotBytes_; };
    std::array<PendingRecv, kSegmentsInFlight> window{};  // inFlight <= kSegmentsInFlight
    auto postRecv = [&](size_t i) {
      const size_t step = i / m;
      const Range range = segmentOf(receivedBlock(step), first + i % m);
      if (step < reduceSteps) {
        window[i % inFlight].post(channel_, left, slotOf(i), range.count * elemSize_);
      } else {
        layout_.receive(window[i % inFlight], channel_, left, 0, range.offset, range.count);
      }
    };

    SendQueue sends(channel_);
    for (size_t i = 0; i < inFlight; ++i) postRecv(i);
    for (size_t k = 0; k < m; ++k) {  // m <= inFlight: within the right neighbour's window
      const Range range = segmentOf(sentBlock(0), first + k);
      layout_.send(sends, right, Side::Input, 0, range.offset, range.count);
    }
    for (size_t i = 0; i < messages; ++i) {
      const size_t step = i / m;
      const Range range = segmentOf(receivedBlock(step), first + i % m);
      sends.waitWith(window[i % inFlight]);
      if (range.count != 0) {
        if (step < reduceSteps) layout_.reduceWith(0, range.offset, range.count, slotOf(i), true);
        if (step + 1 < totalSteps) layout_.send(sends, right, Side::Output, 0, range.offset, range.count);
      }
      // The slot of message i has been consumed; it takes message i + inFlight.
      if (i + inFlight < messages) postRecv(i + inFlight);
    }
    sends.completeAll();
  }

  const CollArgs& args_;
  Channel& channel_;
  const int p_;
  const int rank_;
  const size_t elemSize_;
  const Partition blocks_;
  const size_t segmentsPerBlock_;
  const size_t slotBytes_;  // reduce-scatter segments arrive in scratch; allgather ones in recvbuff
  char* const slots_;
  VectorLayout layout_;
};

}  // namespace

void allReduceRing(const CollArgs& args, Channel& channel) {
  if (args.count == 0) return;
  if (channel.size() == 1) return VectorLayout(args, false, false).copy(0, 0);
  RingAllReduce(args, channel).run();
}

}  // namespace weft
