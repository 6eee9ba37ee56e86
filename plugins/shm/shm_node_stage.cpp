// The node backend's staging ring: where a staged collective's input and output areas go in the owner's
// ring (after its control lines), and when an area may be overwritten (see shm_node.h).
#include <algorithm>

#include "shm_node.h"
#include "shm_segment.h"

namespace weft::shm {

void NodeComm::touchSegments() const {
  // The control lines too, not only the ring, and here rather than when the segment is made: with only the
  // rings touched, or the owner's control written before the peers had mapped it, the first pass of small
  // collectives through the kStepLines lines (ten pages) cost 10-25 us once per page, with no page fault or
  // context switch counted on either rank (2-vCPU EPYC VM, 8-byte AllReduce at 2 ranks: commperf's first
  // size read 0.67-0.71 of Open MPI's speed, 0.89-1.09 with every page touched here).
  for (int r = 0; r < nranks_; ++r) {
    // Only the owner writes its segment (peers write the doorbell's words, never a page's first byte), and
    // the value written is the one read.
    touchPages(peers_[r].control, segmentBytes_, r == rank_);
  }
}

uint64_t NodeComm::latestOverlapping(const RingArea& area) const {
  for (uint64_t back = 2; back < kSlots && back <= collective_; ++back) {
    const RingArea& old = ringAreas_[(collective_ - back) % kSlots];
    if (old.overlaps(area)) return back;
  }
  return 0;
}

bool NodeComm::doneWith(uint64_t back) const {
  return back == 0 || back > collective_ || allReached(firstStepAfter(back));
}

void NodeComm::stage(size_t inBytes, size_t outBytes) {
  auto aligned = [](size_t bytes) { return (bytes + kStageAlign - 1) / kStageAlign * kStageAlign; };
  const size_t need = aligned(inBytes) + aligned(outBytes);  // at most 2 stageBytes_: a quarter of the ring
  // Where the areas of the collectives still in flight end: beyond, every peer is done (begin()).
  auto highWater = [&] {
    size_t end = 0;
    for (const RingArea& old : ringAreas_) end = std::max(end, old.end);
    return end;
  };
  // Measured at 2 and 4 ranks on a 2-vCPU VM (perf/README, "Small collectives on a page or two"):
  // - Areas of at most kCycleBytes go back to the ring's start whenever every peer has begun the collective
  //   before (never over that one: a large ReduceScatter there), so they cycle over a page or two. Walking
  //   further made 2 KiB AllGathers, ReduceScatters and AllToAlls at 2 ranks take 3-11 us instead of 0.7 in
  //   some launches (every few calls touching a page not touched for a while).
  // - Larger areas, and a rank whose peers lag (the root of a Broadcast), walk on: areas no peer has read
  //   lately are cheaper to write (cycling made 4-8 KiB AllReduces at 2 ranks 10-29 % slower, and 2 KiB
  //   Broadcasts at 4 ranks 15 % when the root cycled whenever the start was free). Past warmBytes they go
  //   back to the start, and wait there if they must (walking all 2 MiB made 1000 fused 4 KiB AllReduces
  //   15-25 % slower); a large collective may take any part of the ring. warmBytes leaves room for kSlots
  //   areas of this size (a rank may run that far ahead), from kWarmRingMinBytes to kWarmRingBytes: areas
  //   of 4-8 KiB walking the whole first MiB spent most of a benchmark's few hundred calls on pages not
  //   touched since connect (commperf's rounds of ten at 2 ranks, 8 KiB: AllToAll 1.54 -> 1.03 us,
  //   AllGather 1.33 -> 1.02, Reduce 1.48-1.98 -> 0.94, alike back to back and from 32 KiB); a fixed 256 KiB
  //   held a 32 KiB Broadcast's root at 4 ranks to 8 collectives ahead (3.2 -> 4.6 us).
  // - A rank whose next area a peer may still read (it cycled, then its peers fell behind) takes fresh bytes
  //   past every area in flight rather than wait.
  const RingArea& previous = ringAreas_[(collective_ + kSlots - 1) % kSlots];
  const bool clearOfPrevious = previous.begin >= need || previous.end <= previous.begin;  // empty: staged nothing
  size_t at = ringCursor_;
  if (need <= kCycleBytes && clearOfPrevious && doneWith(2)) {
    at = 0;
  } else if (at + need <= ringBytes_ && !doneWith(latestOverlapping({at, at + need}))) {
    at = highWater();
  }
  const size_t warmBytes = std::clamp(need * kSlots, kWarmRingMinBytes, kWarmRingBytes);
  if (at + need > ringBytes_ || (at + need > warmBytes && clearOfPrevious)) at = 0;
  // Never over the collective just before: a peer may still read its area, and waiting for it is not
  // possible here (its end is the first step of this collective, whose number comes with publishing). Only
  // the wrap at the ring's end can land there, when that collective lies at the start; its end is then
  // before the ring's middle (it began within `need` bytes of the start, and no area exceeds a quarter of
  // the ring), so this one fits right after it. Until 2026-11-29 it went over it: a Reduce's non-roots
  // running ahead in a 32 KiB ring overwrote an input the root had not read yet.
  if (previous.overlaps({at, at + need})) at = previous.end;
  if (at + need > ringBytes_) {
    throw NodeError{weftInternalError, "staging ring: no room for " + std::to_string(need) +
                                           " bytes after the previous collective's area"};
  }
  const RingArea area{at, at + need};
  if (const uint64_t back = latestOverlapping(area); back != 0) {
    waitAllReached(firstStepAfter(back));
  }
  ringAreas_[collective_ % kSlots] = area;
  stageIn_ = static_cast<uint32_t>(area.begin / kStageAlign);
  stageOut_ = static_cast<uint32_t>((area.begin + aligned(inBytes)) / kStageAlign);
  ringCursor_ = area.end;
}

unsigned char* NodeComm::stageIn(int r) const {
  const uint32_t at = r == rank_ ? stageIn_ : peerDescriptor(r).stageIn;
  return ringOf(r) + size_t{at} * kStageAlign;
}

unsigned char* NodeComm::stageOut(int r) const {
  const uint32_t at = r == rank_ ? stageOut_ : peerDescriptor(r).stageOut;
  return ringOf(r) + size_t{at} * kStageAlign;
}

}  // namespace weft::shm
