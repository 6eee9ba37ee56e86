// --fusion N:BYTES: N AllReduces (or AllGathers, ReduceScatters: --fusion_coll) of BYTES each, issued between
// weftGroupStart and weftGroupEnd on N separately allocated buffer pairs (so that the library has to pack them
// itself), timed four ways with the sweep's machinery (timeRounds: warm-up, rounds taken in turns in a
// balanced order, medians and min-max):
//
//   fused    the group with weftCommSetFusion(comm, <collective>, auto)
//   unfused  the same group with weftFusionOff
//   single   one call of N*BYTES (contiguous buffers): what fusion can at best approach
//   peers    each --peer library making N calls on the same N buffers (MPI: N MPI_Allreduce, ...)
//
// BYTES is each call's count in bytes: of the input of AllReduce and AllGather, of the output of
// ReduceScatter (the count weft.h's calls take). Times are per group (per call for single). The launches per
// group come from weftCommGetStats deltas around one untimed group. With -c 1, every form is checked once;
// the N buffers hold consecutive slices of one input, so a result that lands in the wrong buffer is caught.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench.h"
#include "options.h"
#include "peer.h"
#include "weft/weft.h"

namespace commperf {

// weftCommGetStats deltas around one group (or call): the largest over the ranks, which should all agree.
struct LaunchStats {
  bool measured = false;
  long long ops = 0;          // opsSubmitted
  long long launches = 0;     // collectivesLaunched
  long long bytesFused = 0;   // bytesFused
  long long launchesMin = 0;  // the smallest launch count of any rank
  bool agree() const { return launches == launchesMin; }
};

// Stats' deltas around one run of `call`, the largest (and the smallest launch count) over the ranks.
// Collective over MPI_COMM_WORLD. Shared by --fusion and --plan.
LaunchStats launchStatsOf(weftComm_t comm, int rank, const Side& call);

// The peers' sides of a many-calls case (--fusion, --plan): each peer that can make the N calls on their own
// buffers adds a side to `sides`; the others get their reason in measures[p].skipped. Shared by both modes.
class PeerSides {
 public:
  PeerSides(std::vector<Side>& sides, std::vector<Measure>& measures, const Peers& peers, const CollDesc& desc,
            weftDataType_t type, std::optional<weftRedOp_t> op, const std::vector<CallArgs>& args, int rank);
  // Fills each peer's measure from timeRounds' result.
  void fill(const std::vector<std::vector<double>>& times, double bytes, double busFactor) const;
  // Checks each peer that ran: prepare() (fresh inputs, poisoned outputs), its N calls, then its measure's
  // `wrong` from countWrong() (collective over the ranks; 0 where the peer does not check this rank).
  void check(const Peers& peers, const CollDesc& desc, const std::vector<CallArgs>& args, int rank, int root,
             const std::function<void()>& prepare, const std::function<long long()>& countWrong) const;

 private:
  std::vector<Measure>& measures_;
  std::vector<size_t> sideOf_;  // 0: the peer skips this shape
};

// The buffers of one case. The N pairs are separate allocations, send and receive interleaved, so no two
// sends (or receives) are neighbours and the library cannot treat them as one block. The single call's
// contiguous pair is N times as large (--fusion; --plan has none: `single` false).
class FusionBuffers {
 public:
  FusionBuffers(int calls, size_t sendBytes, size_t recvBytes, bool single);
  ~FusionBuffers() { release(); }
  FusionBuffers(const FusionBuffers&) = delete;
  FusionBuffers& operator=(const FusionBuffers&) = delete;

  std::vector<unsigned char*> send, recv;
  unsigned char* singleSend = nullptr;
  unsigned char* singleRecv = nullptr;

 private:
  static unsigned char* allocate(size_t bytes);
  static void free(unsigned char* p);
  void release();
};

struct FusionRow {
  const CollDesc* desc = nullptr;  // allreduce, allgather or reducescatter
  FusionCase fusionCase;           // as given (bytes before rounding down to whole elements)
  size_t count = 0;                // elements per call (weft.h's count: AllGather's sendcount, ...)
  size_t bytes = 0;                // bytes per call: count * element size
  weftDataType_t type = weftFloat32;
  std::optional<weftRedOp_t> op;   // unset for AllGather
  Measure fused, unfused, single;  // busbw from N * bytes, as one call of that size
  LaunchStats fusedStats, unfusedStats, singleStats;
  std::vector<Measure> peers;  // in --peer order: N calls of each peer

  size_t totalBytes() const { return bytes * static_cast<size_t>(fusionCase.calls); }
  // a's time / b's time (medians); 0 when either is missing.
  static double ratio(const Measure& a, const Measure& b);
  double unfusedOverFused() const { return ratio(unfused, fused); }
  double fusedOverSingle() const { return ratio(fused, single); }
  double peerOverFused(size_t peer) const { return peer < peers.size() ? ratio(peers[peer], fused) : 0; }
  long long wrong() const;  // over every checked form
};

class FusionBench {
 public:
  // peers may be empty; they must outlive the FusionBench. Leaves the fusion setting of every collective it
  // timed at the environment's (weftCommSetFusion with NULL) when destroyed.
  FusionBench(weftComm_t comm, int rank, int nranks, const Options& options, const Peers& peers);
  ~FusionBench();
  FusionBench(const FusionBench&) = delete;
  FusionBench& operator=(const FusionBench&) = delete;

  FusionRow run(const CollDesc& desc, const FusionCase& fusionCase, weftDataType_t type,
                std::optional<weftRedOp_t> op);

 private:
  // Sets the communicator's fusion mode for `coll` when it is not already that one (so that a side switches
  // modes in the untimed call that starts its turn, not in the timed ones).
  void setMode(weftCollType_t coll, weftFusionMode_t mode);
  // Runs `call` once and returns the statistics' deltas around it. Collective over MPI_COMM_WORLD.
  LaunchStats launchesOf(const Side& call);

  weftComm_t comm_;
  int rank_;
  int nranks_;
  const Options& options_;
  const Peers& peers_;
  std::vector<weftCollType_t> collsSet_;  // the collectives whose fusion mode it changed
  weftCollType_t coll_ = weftCollAllReduce;
  weftFusionMode_t mode_ = weftFusionOff;
};

// Bytes one rank allocates for a case of `coll` on `nranks` ranks: N send and receive buffers plus the single
// call's pair.
double fusionBytesPerRank(const FusionCase& fusionCase, const CollDesc& desc, int nranks);

}  // namespace commperf
