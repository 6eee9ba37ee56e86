// ReduceScatter, ring (the first phase of the ring AllReduce).
//
// The input is p blocks of `count` elements; rank r ends with block r reduced over all ranks. Ranks form
// a ring, each sending to rank+1 and receiving from rank-1. In p-1 steps: at step s rank r sends its
// partial result for block (r-s-1) mod p (at step 0, its own input) and receives the partial result for
// block (r-s-2) mod p, which it reduces with its own input; that is what it sends at step s+1. The partial
// result received at step p-2 is for block r, and reducing it gives the output.
//
// Pipelining: blocks are cut into segments of at most gPipelineSegmentBytes; a segment is forwarded as
// soon as it has been received and reduced, with up to kSegmentsInFlight receives posted ahead, in rounds
// of kSegmentsInFlight segments per block (pipeline.h). Partial results live in scratch slots (sendbuff is
// read-only, recvbuff holds only block r): one per receive in flight plus the one being forwarded.
//
// Wire, per rank: p-1 steps of n/p bytes (n = p * count * element size), (p-1)/p * n in all.
//
// A fused ReduceScatter's calls (CollArgs::calls) run the same steps on their own buffers, each call's blocks
// in its own sendbuff, segments spanning calls as vectored messages (vector_layout.h).
//
// Ordered: the ring may run over a SubChannel whose ranks are in another order (host by host, so that it
// crosses between hosts only once per host); block j, the one member j ends with, then lives at position
// blockPositions[j] of sendbuff.
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

void reduceScatterRing(const CollArgs& args, Channel& channel) { reduceScatterRingOrdered(args, channel, {}); }

void reduceScatterRingOrdered(const CollArgs& args, Channel& channel, std::span<const int> blockPositions) {
  const int p = channel.size();
  const int rank = channel.rank();
  const size_t elemSize = dataTypeSize(args.type);
  const size_t count = args.count;
  if (count == 0) return;
  auto position = [&](size_t block) {
    return blockPositions.empty() ? block : static_cast<size_t>(blockPositions[block]);
  };
  VectorLayout layout(args, true, false);
  if (p == 1) return layout.copy(position(0), 0);

  const size_t segmentsPerBlock = ceilDiv(count, segmentElements(elemSize));
  const Partition segments(count, segmentsPerBlock);  // none is empty: segmentsPerBlock <= count
  const size_t lastStep = p - 2;
  const int right = ringIndex(rank + 1, p);
  const int left = ringIndex(rank - 1, p);
  auto sentBlock = [&](size_t step) {
    return static_cast<size_t>(ringIndex(rank - static_cast<int>(step) - 1, p));
  };
  auto receivedBlock = [&](size_t step) { return sentBlock(step + 1); };

  const size_t slotBytes = segments.largest() * elemSize;
  char* slots = static_cast<char*>(channel.scratch(0, (kSegmentsInFlight + 1) * slotBytes));

  // One round: segments [first, first + m) of every block. Message i is segment first + i % m of step i / m.
  auto round = [&](size_t first, size_t m) {
    const size_t messages = (p - 1) * m;
    const size_t inFlight = std::min(kSegmentsInFlight, messages);
    // Message i arrives in slot i % (inFlight + 1) and is forwarded from there, by a send that the wait for
    // message i + 1 completes, before message i + inFlight + 1 reuses the slot.
    auto slotOf = [&](size_t i) { return slots + (i % (inFlight + 1)) * slotBytes; };
    std::array<PendingRecv, kSegmentsInFlight> window{};  // inFlight <= kSegmentsInFlight
    auto postRecv = [&](size_t i) {
      window[i % inFlight].post(channel, left, slotOf(i), segments.count(first + i % m) * elemSize);
    };

    SendQueue sends(channel);
    for (size_t i = 0; i < inFlight; ++i) postRecv(i);
    for (size_t k = 0; k < m; ++k) {  // m <= inFlight: within the right neighbour's window
      layout.send(sends, right, Side::Input, position(sentBlock(0)), segments.offset(first + k),
                  segments.count(first + k));
    }
    for (size_t i = 0; i < messages; ++i) {
      const size_t step = i / m;
      const size_t segment = first + i % m;
      const size_t n = segments.count(segment);
      char* partial = slotOf(i);
      sends.waitWith(window[i % inFlight]);
      // At the last step into recvbuff (in place exactly this rank's input block: reduce() allows that
      // aliasing), before it into the partial result, which goes on.
      layout.reduceWith(position(receivedBlock(step)), segments.offset(segment), n, partial, step == lastStep);
      if (step != lastStep) sends.post(right, partial, n * elemSize);
      if (i + inFlight < messages) postRecv(i + inFlight);
    }
    sends.completeAll();
  };

  for (size_t first = 0; first < segmentsPerBlock; first += kSegmentsInFlight) {
    round(first, std::min(kSegmentsInFlight, segmentsPerBlock - first));
  }
}

}  // namespace weft
