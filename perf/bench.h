// The timing loop. For one collective, size, type and op: warm-up, then R rounds; in each round every library
// (Weft, then each --peer library) runs k timed iterations, the libraries taking turns in an order that changes
// from round to round (turn_order.h), so that a burst of noise on a shared machine hits all of them rather
// than one, and none always runs right after the same other one.
// A round's time is the per-iteration average of the slowest rank; a size's time is the median round, with
// the min-max spread. Each library is then checked once.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "colls.h"
#include "options.h"
#include "peer.h"
#include "weft/weft.h"

namespace commperf {

// Prints the failing call, weftGetErrorString and weftGetLastErrorMessage, then MPI_Abort(1).
void weftCheck(weftResult_t result, const char* what, int rank);

// One call of a peer (or its prepare step); on failure prints the peer's message and aborts the job.
enum class PeerStep { kCall, kCallInPlace, kPrepare };
void peerCall(Peer& peer, const CollDesc& desc, const CallArgs& args, int rank, PeerStep step = PeerStep::kCall);

// One library's timed unit of work (one call, or one group of calls).
using Side = std::function<void()>;

// The timing loop the header describes, shared by the sweep (Bench) and --fusion (FusionBench): warm-up, then
// options.rounds rounds in which every side, in turn_order.h's order, sleeps 2 ms (with more than one side, when
// `pause`), makes one untimed call and then itersPerRound() timed ones. Seconds per call of each side in
// each round, max across ranks: result[side][round]. Collective over MPI_COMM_WORLD. With `touch`, touch(side)
// runs before every call of that side (the untimed one too) and only the calls are timed.
std::vector<std::vector<double>> timeRounds(const std::vector<Side>& sides, const Options& options,
                                            bool pause = true, const std::function<void(size_t)>& touch = {});

// Rewrites every cache line of [data, data + bytes) with what it holds (--touch_input): the lines end up dirty
// in this CPU's cache, as an input the application has just computed would be.
void touchLines(void* data, size_t bytes);

struct Measure {
  bool ran = false;     // false: no such form (in-place alltoall/sendrecv), or the peer cannot run it
  std::string skipped;  // why the peer cannot run it ("n/a" in the table)
  double timeUs = 0;    // median over rounds of the per-iteration time (max across ranks)
  double minUs = 0;     // fastest and slowest round
  double maxUs = 0;
  std::vector<double> roundUs;  // every round, in order
  double algBw = 0;             // GB/s, from the median time
  double busBw = 0;             // GB/s
  long long wrong = -1;         // summed over ranks; -1 when not checked
};

// Fills m from one side's round times: median, min-max, algbw from `bytes` and busbw = algbw * busFactor.
void fillMeasure(Measure& m, const std::vector<double>& roundSec, double bytes, double busFactor);

// Sum of `local` over all ranks (MPI_COMM_WORLD).
long long sumOverRanks(long long local);

struct Row {
  const CollDesc* desc;
  size_t size;   // bytes, max(send, recv) buffer as nccl-tests prints
  size_t count;  // elements passed to Weft
  weftDataType_t type;
  std::optional<weftRedOp_t> op;
  int root;                                // -1 when the collective has none
  Measure outOfPlace;                      // Weft
  Measure inPlace;                         // Weft; with peers, only with --peer_in_place
  std::vector<Measure> peers;              // each peer's out-of-place form, in --peer order; empty without peers
  std::vector<Measure> peersInPlace;       // each peer's in-place form (--peer_in_place; ran = false: none)
  double ratio(size_t peer) const;         // that peer's time / Weft time (medians); 0 when either is missing
  double inPlaceRatio(size_t peer) const;  // the same for the in-place forms
};

// Buffers for Weft's and the peers' calls, from `source` (allocateFrom, before the first allocation; cache-line
// aligned operator new by default), for every library alike; freeBuffer(nullptr) does nothing. A failure of
// weftMemAlloc ends the job.
void allocateFrom(BufferSource source);
unsigned char* allocateBuffer(size_t bytes);
void freeBuffer(unsigned char* p);

class Bench {
 public:
  // capacityBytes: the largest size to be run. peers may be empty; they must outlive the Bench.
  Bench(weftComm_t comm, int rank, int nranks, const Options& options, size_t capacityBytes, const Peers& peers);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  Row run(const CollDesc& desc, size_t bytes, weftDataType_t type, std::optional<weftRedOp_t> op);

  // Weft out of place on each of `comms` (the same ranks as the Bench's communicator, each made differently:
  // an algorithm forced, or the tuner left to choose), the communicators taking turns round by round as
  // the peers do, so that a burst of noise falls on all of them. One Measure per communicator, each checked
  // (options.check) from fresh inputs.
  std::vector<Measure> runOnComms(const CollDesc& desc, size_t bytes, weftDataType_t type,
                                  std::optional<weftRedOp_t> op, const std::vector<weftComm_t>& comms);

 private:
  CallArgs argsFor(const Row& row, const CollCounts& counts, bool inPlace);
  void measureWeft(const Row& row, const CollCounts& counts, bool inPlace, Measure& m);
  void measureWithPeers(Row& row, const CollCounts& counts);
  long long checkPeer(Peer& peer, const CollDesc& desc, const Row& row, const CollCounts& counts, bool inPlace);

  weftComm_t comm_;
  int rank_;
  int nranks_;
  const Options& options_;
  size_t capacity_;
  const Peers& peers_;
  unsigned char* send_ = nullptr;
  unsigned char* recv_ = nullptr;
};

}  // namespace commperf
