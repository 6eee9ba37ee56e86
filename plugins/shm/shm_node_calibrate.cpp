// Whether a large AllReduce runs faster by CMA on the callers' buffers than bounced through memory the peers
// map (core/collectives/bounce.cpp), timed here rather than assumed.
//
// Bounced, each rank copies its input into a buffer of plugin memory, the peers reduce out of it and write
// into it with memcpy (they map it), and the rank copies the result out: three copies of the piece, all in
// user space. Direct, the peers read and write the callers' buffers with process_vm_readv/writev: fewer
// bytes moved, but the kernel pins and maps the pages at every call. Which wins depends on the host: on
// three 2-vCPU AMD EPYC boxes (Zen 3, 4, 5) the bounce won by 1.5-2.5x; on a 2-vCPU Xeon (KVM, 2026-12-02)
// direct won from 256 KiB by 1.1-1.3x with inputs the application had just written (by 1.5x with inputs
// untouched since the call before, as benchmarks that reuse one buffer see them).
//
// The probe: AllReduces (float sum) of kProbeBytes, bounced piece by piece as core does, in blocks of
// kBlockCalls calls one way then the other (kBlocks of each, interleaved, after one of each to warm up), the first
// call of each block untimed: a way pays for what the other left in the caches (alternating call by call, CMA's
// writes into outputs the bounce had just written itself cost it its lead: 57-66 us against 60-65 on the Xeon,
// where runs of each took 40-42 against 49-52, as in commperf's loops). Each input is rewritten before its call as
// an application's would be (lines dirty in this rank's cache: input the peers last read flatters CMA). CMA wins
// where the direct way's best call was faster than the bounced way's (a tie keeps the bounce): the best, since
// whatever else runs on the host only adds time (the first collective of a job shares the CPUs with the rest of
// its start: medians moved by 10 % from launch to launch, the best calls by 2 %). On the first Xeon, timing one
// piece, the best direct call took 0.80-0.82 of the best bounced one in eight launches out of eight; on the
// second, timing four, 0.68-1.00 in twelve (median 0.87; one piece: 0.93-1.04). Until 2026-12-02 CMA had to
// win by 10 %, so that noise would not flip the choice where it mattered little; but that margin sat on the
// second Xeon's own ratio: four launches in twelve chose the bounce, and launches that did ran AllReduces of
// 512 KiB-8 MiB 1.2-1.6x slower than those that chose CMA (commperf --peer_in_place, Weft in us, bounced
// against CMA: 512 KiB 73-79 against 48-56, 2 MiB in place 334-347 against 219-265, 8 MiB in place 1270-1439
// against 939-1091). Where the bounce wins (the AMD boxes, 1.5-2.5x) it wins far from a tie. Rank 0's verdict
// is broadcast, so every rank decides alike. About 10 ms at 2 ranks (the first collective of the first
// communicator: 8-9 ms -> 18-19 ms on the second Xeon; 3.5 ms timing one piece), once per process and rank
// count with a node backend whose ranks each have a CPU (ranks sharing CPUs would time the scheduler; they keep
// the bounce, which won there on the AMD boxes and, on the Xeon, up to 256 KiB, and in this probe forced at np 4
// on its 2 vCPUs: best calls 94-261 us bounced against 147-290 by CMA, six launches).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "shm_log.h"
#include "shm_memory.h"
#include "shm_node.h"

namespace weft::shm {
namespace {

// Core bounces in pieces of kPieceBytes (kBouncePieceBytes), and the verdict applies from one piece. The probe
// times four: the bounce's cost per piece (a collective, and so a synchronisation, per piece) shows only over
// several. On a second 2-vCPU Xeon (Emerald Rapids, 2026-12-02), one piece timed alike both ways (best calls
// 62-96 us by CMA against 67-121 bounced, either way from launch to launch), while from 1 MiB CMA won every
// launch, with inputs rewritten before each call (commperf --touch_input, two launches each way, Weft in us,
// CMA against bounced): 2 MiB 327-328 against 358-384 (in place 242-267 against 336-341), 8 MiB 1554-1746
// against 1721-1722 (in place 927-1171 against 1339-1367).
constexpr size_t kPieceBytes = size_t{512} << 10;
constexpr size_t kProbeBytes = 4 * kPieceBytes;
// From this size the bounce stays whatever the probe found. On the Xeon, one 16 MiB AllReduce on buffers other
// work had pushed out of the caches (commperf --fusion's single call, between the other forms' 3 x 32 MiB)
// took 3.5-3.7 ms by CMA against 2.6-2.7 bounced; at 5-6 MiB CMA still won (606-917 us against 798-1032),
// at 10 MiB it went either way (1.5-1.9 ms against 1.6). With inputs just rewritten, CMA won at 16 MiB too
// (2.2 ms against 2.6): large AllReduces in training (gradient buckets) lie somewhere between.
constexpr size_t kBounceFromBytesAnyway = size_t{16} << 20;
constexpr int kBlocks = 3;      // of each way, after a block of each to warm up
constexpr int kBlockCalls = 3;  // the first untimed

// Rewrites every cache line of the buffer with what it holds: dirty in this CPU's cache, as fresh input is.
void dirtyLines(std::vector<float>& buffer) {
  auto* p = reinterpret_cast<volatile unsigned char*>(buffer.data());
  for (size_t i = 0; i < buffer.size() * sizeof(float); i += kCacheLine) {
    const unsigned char held = p[i];
    p[i] = held;
  }
}

// A buffer of plugin memory (shm_memory.h) for the probe's bounce, given back when it goes.
class SharedBuffer {
 public:
  explicit SharedBuffer(size_t bytes) {
    std::string error;
    if (!sharedAllocate(bytes, &data_, &error)) data_ = nullptr;
  }
  ~SharedBuffer() {
    std::string error;
    if (data_ != nullptr) sharedRelease(data_, &error);
  }
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;
  float* data() const { return static_cast<float*>(data_); }

 private:
  void* data_ = nullptr;
};

const char* verdictText(bool cmaWins) {
  return cmaWins ? "AllReduces and Reduces of 512 KiB to 16 MiB run by CMA on the callers' buffers"
                 : "large AllReduces and Reduces are bounced";
}

}  // namespace

bool NodeComm::prefersPluginMemory(const weftBackendOp_v1& op) const {
  const size_t bytes = op.count * plugin::elementBytes(op.datatype);
  return !cmaBeatsBounce_ || bytes < kPieceBytes || bytes >= kBounceFromBytesAnyway;
}

weftResult_t NodeComm::calibrate() {
  cmaBeatsBounce_ = false;
  if (!cma_ || !spin_) return weftSuccess;  // no choice to make (no CMA), or none worth timing
  if (cmaCost_ != CmaCost::Measure) {
    cmaBeatsBounce_ = cmaCost_ == CmaCost::Low;
    return weftSuccess;
  }
  // Rank 0's process may have timed it for a communicator of this size already (half of a new communicator's
  // first collective: 2-rank splits on the Xeon, 6.1-6.6 ms with the probe, 2.7-2.9 without). Its word
  // decides for every rank, so that all probe or none do.
  uint64_t verdict = rank_ == 0 ? cmaVerdicts_->find(nranks_) : CmaVerdicts::kUnknown;
  if (weftResult_t r = shareRank0(&verdict); r != weftSuccess) return r;
  const bool measuredBefore = verdict != CmaVerdicts::kUnknown;
  if (!measuredBefore) {
    if (weftResult_t r = timeCmaAgainstBounce(&verdict); r != weftSuccess) return r;
    if (weftResult_t r = shareRank0(&verdict); r != weftSuccess) return r;
  }
  cmaBeatsBounce_ = verdict == CmaVerdicts::kCma;
  cmaVerdicts_->remember(nranks_, cmaBeatsBounce_ ? CmaVerdicts::kCma : CmaVerdicts::kBounce);
  if (rank_ == 0 && measuredBefore) {
    logf(logHost_, weftLogInfo, "node backend: %s (measured by an earlier communicator of %d ranks)",
         verdictText(cmaBeatsBounce_), nranks_);
  }
  return weftSuccess;
}

weftResult_t NodeComm::shareRank0(uint64_t* value) {
  const weftBackendOp_v1 broadcast{weftCollBroadcast, value, value, 1, weftUint64, weftSum, 0};
  return run(broadcast);
}

weftResult_t NodeComm::timeCmaAgainstBounce(uint64_t* verdict) {
  const size_t count = kProbeBytes / sizeof(float);
  const size_t pieceCount = kPieceBytes / sizeof(float);
  std::vector<float> in(count, 1.0f);
  std::vector<float> out(count);
  // Every rank allocates or fails alike only by luck: each takes part in both ways whatever it got, and a
  // rank without the buffer bounces through heap memory instead (it then measures CMA both ways, which can
  // only keep the bounce).
  SharedBuffer shared(kPieceBytes);
  std::vector<float> heapLane(shared.data() != nullptr ? 0 : pieceCount);
  float* bounce = shared.data() != nullptr ? shared.data() : heapLane.data();
  const weftBackendOp_v1 direct{weftCollAllReduce, in.data(), out.data(), count, weftFloat32, weftSum, 0};
  const weftBackendOp_v1 bounced{weftCollAllReduce, bounce, bounce, pieceCount, weftFloat32, weftSum, 0};
  std::vector<double> directUs;
  std::vector<double> bouncedUs;
  for (int block = -2; block < 2 * kBlocks; ++block) {
    const bool goDirect = block % 2 == 0;
    for (int call = 0; call < kBlockCalls; ++call) {
      dirtyLines(in);
      const auto start = std::chrono::steady_clock::now();
      if (goDirect) {
        if (weftResult_t r = run(direct); r != weftSuccess) return r;
      } else {
        for (size_t at = 0; at < count; at += pieceCount) {  // as core bounces: piece by piece
          std::memcpy(bounce, in.data() + at, kPieceBytes);
          if (weftResult_t r = run(bounced); r != weftSuccess) return r;
          std::memcpy(out.data() + at, bounce, kPieceBytes);
        }
      }
      const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
      if (block >= 0 && call > 0) (goDirect ? directUs : bouncedUs).push_back(took.count());
    }
  }
  const double directBest = *std::min_element(directUs.begin(), directUs.end());
  const double bouncedBest = *std::min_element(bouncedUs.begin(), bouncedUs.end());
  const bool cmaWins = directBest < bouncedBest;
  *verdict = cmaWins ? CmaVerdicts::kCma : CmaVerdicts::kBounce;
  if (rank_ == 0) {
    logf(logHost_, weftLogInfo,
         "node backend: AllReduce of %zu KiB at %d ranks, fresh inputs: %.1f us by CMA, %.1f bounced through "
         "mapped memory in %zu KiB pieces (best of %d): %s",
         kProbeBytes >> 10, nranks_, directBest, bouncedBest, kPieceBytes >> 10, kBlocks * (kBlockCalls - 1),
         verdictText(cmaWins));
  }
  return weftSuccess;
}

}  // namespace weft::shm
