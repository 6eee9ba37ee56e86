// AllGather, ring.
//
// Rank r's block (count elements) goes to position r of every rank's recvbuff. Ranks form a ring, each
// sending to rank+1 and receiving from rank-1. Rank r first places its own block, then in p-1 steps: at
// step s it sends block (r-s) mod p (its own at step 0, afterwards the one it received the step before)
// and receives block (r-s-1) mod p straight into recvbuff.
//
// Pipelining: blocks are cut into segments of at most gPipelineSegmentBytes; a segment is forwarded as
// soon as it has arrived, with up to kSegmentsInFlight receives posted ahead, in rounds of
// kSegmentsInFlight segments per block (pipeline.h). No scratch is needed.
//
// Wire, per rank: p-1 steps of n bytes (n = count * element size), (p-1) * n in all.
//
// A fused AllGather's calls (CollArgs::calls) run the same steps on their own buffers, each call's blocks
// in its own recvbuff, segments spanning calls as vectored messages (vector_layout.h).
//
// Ordered: the ring may run over a SubChannel whose ranks are in another order (host by host, so that it
// crosses between hosts only once per host); block j, member j's, then lives at position blockPositions[j]
// of recvbuff.
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

void allGatherRing(const CollArgs& args, Channel& channel) { allGatherRingOrdered(args, channel, {}); }

void allGatherRingOrdered(const CollArgs& args, Channel& channel, std::span<const int> blockPositions) {
  const int p = channel.size();
  const int rank = channel.rank();
  const size_t elemSize = dataTypeSize(args.type);
  const size_t count = args.count;
  if (count == 0) return;
  auto position = [&](size_t block) {
    return blockPositions.empty() ? block : static_cast<size_t>(blockPositions[block]);
  };
  VectorLayout layout(args, false, true);
  // In place, sendbuff already is this rank's block of recvbuff.
  layout.copy(0, position(rank));
  if (p == 1) return;

  const size_t segmentsPerBlock = ceilDiv(count, segmentElements(elemSize));
  const Partition segments(count, segmentsPerBlock);
  const int right = ringIndex(rank + 1, p);
  const int left = ringIndex(rank - 1, p);
  auto sentBlock = [&](size_t step) { return static_cast<size_t>(ringIndex(rank - static_cast<int>(step), p)); };
  auto receivedBlock = [&](size_t step) { return sentBlock(step + 1); };

  // One round: segments [first, first + m) of every block. Message i is segment first + i % m of step i / m.
  auto round = [&](size_t first, size_t m) {
    const size_t messages = (p - 1) * m;
    const size_t inFlight = std::min(kSegmentsInFlight, messages);
    std::array<PendingRecv, kSegmentsInFlight> window{};  // inFlight <= kSegmentsInFlight
    auto postRecv = [&](size_t i) {
      const size_t segment = first + i % m;
      layout.receive(window[i % inFlight], channel, left, position(receivedBlock(i / m)), segments.offset(segment),
                     segments.count(segment));
    };

    SendQueue sends(channel);
    for (size_t i = 0; i < inFlight; ++i) postRecv(i);
    for (size_t k = 0; k < m; ++k) {  // m <= inFlight: within the right neighbour's window
      layout.send(sends, right, Side::Output, position(rank), segments.offset(first + k),
                  segments.count(first + k));
    }
    for (size_t i = 0; i < messages; ++i) {
      const size_t step = i / m;
      const size_t segment = first + i % m;
      sends.waitWith(window[i % inFlight]);
      if (step + 1 < static_cast<size_t>(p - 1)) {
        layout.send(sends, right, Side::Output, position(receivedBlock(step)), segments.offset(segment),
                    segments.count(segment));
      }
      if (i + inFlight < messages) postRecv(i + inFlight);
    }
    sends.completeAll();
  };

  for (size_t first = 0; first < segmentsPerBlock; first += kSegmentsInFlight) {
    round(first, std::min(kSegmentsInFlight, segmentsPerBlock - first));
  }
}

}  // namespace weft
