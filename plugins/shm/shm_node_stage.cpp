// The node backend's staging ring: where a staged collective's input and output areas go in the owner's
// ring (after its control lines), and when an area may be overwritten (see shm_node.h).
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

void NodeComm::stage(size_t inBytes, size_t outBytes) {
  auto aligned = [](size_t bytes) { return (bytes + kStageAlign - 1) / kStageAlign * kStageAlign; };
  const size_t need = aligned(inBytes) + aligned(outBytes);  // at most 2 stageBytes_: a quarter of the ring
  // Staging walks the ring from its start again once past the first kWarmRingBytes, unless that would
  // overwrite the collective just before (a large ReduceScatter there): a run of small collectives then
  // stays in the cache (walking the whole 2 MiB ring made 1000 fused 4 KiB AllReduces 15-25 % slower at
  // 2 ranks), while a large one may take any part of the ring.
  const RingArea& previous = ringAreas_[(collective_ + kSlots - 1) % kSlots];
  const bool clearOfPrevious = previous.begin >= need || previous.end <= previous.begin;  // empty: staged nothing
  if (ringCursor_ + need > ringBytes_ || (ringCursor_ + need > kWarmRingBytes && clearOfPrevious)) ringCursor_ = 0;
  const RingArea area{ringCursor_, ringCursor_ + need};
  // The latest earlier collective whose area this one overwrites (never the one just before: the ring holds
  // four of the largest): every peer must be done with it, as it is once it has begun the next. Those older
  // than kSlots - 1 are, since begin().
  for (uint64_t back = 2; back < kSlots && back <= collective_; ++back) {
    const RingArea& old = ringAreas_[(collective_ - back) % kSlots];
    if (old.begin < area.end && area.begin < old.end) {
      const uint64_t next = firstSteps_[(collective_ - back + 1) % kSlots];
      waitAllReached(next);
      break;
    }
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
