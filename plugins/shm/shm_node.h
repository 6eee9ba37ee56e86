// The node backend: whole collectives among the ranks of a communicator that all live on this host, run
// through memory they share rather than through messages.
//
// Every rank owns one segment (a sealed memfd, mapped by every rank of the communicator; peers open it
// through /proc/<pid>/fd, which the kernel allows exactly where it allows process_vm_readv). The owner
// writes its segment, peers only read it, except for the doorbell. A segment holds:
// - a doorbell (futex word) that peers ring after each step, so that a rank can sleep while it waits;
// - a step counter: every rank counts the steps of every collective alike, so "rank q has reached step s"
//   is one load. Step s is stored in line s % kStepLines, with the collective's descriptor (collective,
//   count, type, op, root, buffer addresses) when s is its first step;
// - a staging ring (kRingStages stage sizes) for collectives whose inputs fit: each collective that stages
//   takes the next bytes it needs (in, and out for a two-step AllReduce), or the ring's first bytes again
//   once every peer is done with them (shm_node_stage.cpp), and says where in its descriptor. Before
//   collective n a rank waits until every peer has begun collective n - kSlots + 1, so it is done with
//   n - kSlots; and before overwriting the area of a later one, until every peer is done with that one. Ranks
//   that need not wait (the root of a Broadcast, the others of a Reduce) thus run up to kSlots - 1 small
//   collectives ahead (four of the largest), as eager messages let them in MPI, and no peer is ever more than
//   2 kSlots steps away: fewer than kStepLines, so no line is overwritten while someone may still read it.
//   Small collectives packed end to end touch few pages: on a 2-vCPU VM each page a collective touches first
//   after an idle pause cost 0.3-0.5 us (a TLB refill), and ten 128-byte AllReduces in 64 KiB slots of their
//   own (before the ring) took 1.2-1.4 us each instead of 0.75. Every rank touches every page of every
//   segment (control lines and ring) once at connect: the VM's first touch of a page costs several
//   microseconds even where the page tables are filled.
// - a table of this rank's weftMemAlloc buffers (shm_memory.h) that its direct collectives use.
// Large collectives read (process_vm_readv) and write (process_vm_writev) the peers' own buffers: one copy,
// no staging; they end with a step that says "I no longer touch your buffers". A peer buffer listed in the
// peer's table is mapped here instead (once, then kept) and copied with memcpy: CMA pins and maps the
// pages at every call, which costs 30-45 % of a copy's speed.
#ifndef WEFT_PLUGINS_SHM_NODE_H
#define WEFT_PLUGINS_SHM_NODE_H

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <sys/uio.h>

#include "common/element_bytes.h"
#include "shm_context.h"
#include "shm_doorbell.h"
#include "shm_memory.h"
#include "shm_segment.h"
#include "weft/plugin.h"

namespace weft::shm {

class Context;

// What one rank publishes about the collective it is in.
struct NodeDescriptor {
  uint32_t coll;
  uint32_t datatype;
  uint32_t op;
  int32_t root;
  uint64_t count;
  uint64_t sendAddr;
  uint64_t recvAddr;
  uint64_t collective;  // the collective's number on this communicator
  // Where its staging areas lie in the owner's ring, in units of kStageAlign bytes (set by NodeComm::stage;
  // meaningful only to a collective that staged).
  uint32_t stageIn;
  uint32_t stageOut;
};
inline constexpr size_t kStageAlign = 64;

// An input of at most kTinyBytes (of a collective of one step) rides in its descriptor, over the buffer
// addresses, which only direct collectives read: a waiter gets it with the step, in one cache-line transfer
// rather than two (the line after a step is not brought with it; a miss of about 85 ns on the Xeon, where the
// whole 8-byte AllReduce alone took 0.40 us). See tinyBytes().
inline constexpr size_t kTinyBytes = 2 * sizeof(uint64_t);
static_assert(offsetof(NodeDescriptor, recvAddr) == offsetof(NodeDescriptor, sendAddr) + sizeof(uint64_t));
inline unsigned char* tinyBytes(NodeDescriptor& d) { return reinterpret_cast<unsigned char*>(&d.sendAddr); }
inline const unsigned char* tinyBytes(const NodeDescriptor& d) {
  return reinterpret_cast<const unsigned char*>(&d.sendAddr);
}

// Step s is published in line s % kStepLines, with the descriptor when s is a collective's first step: a
// waiter gets both with one cache-line transfer.
// Collectives of one step whose whole input fits kInlineBytes (but not kTinyBytes) carry it in the lines
// after, next to what a waiter reads anyway, rather than in the staging ring. 256 bytes rather than one line (64):
// commperf's short rounds at np 2, 128-512 B, 2026-11-26: AllReduce 128 B 0.81-0.89 -> 0.96-1.07 of Open MPI's
// time, AllToAll 128 B 0.81-0.89 -> 0.95-1.01.
inline constexpr size_t kInlineBytes = 256;
inline constexpr uint64_t kSlots = 32;  // collectives in flight
// How often a rank checks that its peers keep within kSlots (NodeComm::begin): at the checks it asks for
// kWindowCheckEvery - 1 collectives more, so kSlots - kWindowCheckEvery + 1 are in flight at least.
inline constexpr uint64_t kWindowCheckEvery = 4;
inline constexpr uint64_t kStepLines = 128;  // > the most steps kSlots collectives take (2 each)
// The staging ring's size in stage sizes (WEFT_SHM_STAGE_BYTES): four collectives of the largest (in and out
// areas) fit, kSlots of small ones.
inline constexpr size_t kRingStages = 8;
// How far into the ring collectives take areas before they go back to the start (and wait there if they
// must), so that a run of them stays in the cache: room for kSlots areas of their size, within these bounds
// (shm_node_stage.cpp).
inline constexpr size_t kWarmRingBytes = size_t{1} << 20;
inline constexpr size_t kWarmRingMinBytes = size_t{256} << 10;
// Staging areas of at most this many bytes go back to the ring's start as soon as the peers keep pace,
// rather than walk the warm region (shm_node_stage.cpp).
inline constexpr size_t kCycleBytes = 2048;
// What the lines after a collective's first step hold: its inline input (kInlineBytes), or, for a staged
// Broadcast whose root stages its input in pieces after that step, how many bytes of it are in place (read
// and written through std::atomic_ref).
union StepPayload {
  unsigned char bytes[kInlineBytes];
  uint64_t stagedBytes;
};
struct alignas(kCacheLine) StepLine {
  std::atomic<uint64_t> step;
  NodeDescriptor descriptor;
  alignas(kCacheLine) StepPayload payload;
};
static_assert(sizeof(StepLine) == kCacheLine + kInlineBytes);

// Up to this many of a rank's weftMemAlloc buffers are listed at once (the least recently used leaves): enough
// for a buffer per tensor of a model's gradients in one fused group (16 was not: 100 calls on buffers of
// their own took 1 ms each, re-listing and re-mapping buffers at every call).
inline constexpr size_t kSharedRegionSlots = 256;

struct NodeControl {
  DoorbellPage doorbell;                // its own page: the futex word and the sleeper count
  StepLine lines[kStepLines];           // each cache-line aligned (StepLine)
  alignas(kCacheLine) uint64_t cookie;  // random: proves a mapping is the segment the address named
  // The owner's weftMemAlloc buffers that its current direct collective uses (and others). The owner
  // changes it only before a collective's first step and after every peer finished its previous direct
  // one; peers read it only during a direct collective, after that first step.
  alignas(kCacheLine) uint64_t regionCount;  // regions[0, regionCount) are listed
  SharedRegion regions[kSharedRegionSlots];
};

class NodeComm {
 public:
  // Creates this rank's segment. Throws NodeError.
  NodeComm(Context* ctx, const weftBackendComm_v1& info);
  ~NodeComm();
  NodeComm(const NodeComm&) = delete;
  NodeComm& operator=(const NodeComm&) = delete;

  // Fills the address peers need (WEFT_BACKEND_ADDRESS_BYTES). Throws on failure.
  void address(void* out) const;
  // Maps every peer's segment. Returns false with lastError() set.
  bool connect(const unsigned char* addresses);

  bool supports(const weftBackendOp_v1& op) const;
  // Runs one collective. On failure returns its code, with lastError() saying why.
  weftResult_t run(const weftBackendOp_v1& op);
  // The copied-input extension (weftBackendCopiedInputOps_v1): an AllGather whose output block of this rank
  // already holds the input that sendbuff copies; that block is left as it is.
  weftResult_t runFromCopy(const weftBackendOp_v1& op);
  // The list extension (weftBackendListOps_v1): AllReduce over the buffers' concatenation, by CMA.
  bool supportsList(const weftBackendOp_v1& op) const;
  weftResult_t runList(const weftBackendOp_v1& op, const weftBackendBuffer_v1* buffers, size_t numBuffers);
  // Independent collectives in order; consecutive staged AllReduces, AllGathers or ReduceScatters of one type
  // and op share one step, consecutive direct AllGathers or ReduceScatters one synchronisation before and
  // one after.
  weftResult_t runMany(const weftBackendOp_v1* ops, size_t numOps);
  const char* lastError() const { return error_.c_str(); }

  // For the collectives (shm_node_colls.cpp, shm_node_batches.cpp):
  // --------------------------------------------------------
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  // The largest input (per rank) a collective stages, one call or several batched into one step: all of
  // WEFT_SHM_STAGE_BYTES for ReduceScatter, at most 64 KiB for AllGather, AllToAll and Broadcast, 32 KiB for
  // AllReduce and Reduce. Larger ones go direct by CMA.
  size_t stageLimit(weftCollType_t coll) const;
  // Whether core should copy op's buffers into plugin memory and run it there (its bounce; the advice
  // extension): not where calibrate() found CMA faster and op is at least a bounce piece, below 16 MiB.
  // Alike on every rank.
  bool prefersPluginMemory(const weftBackendOp_v1& op) const;
  size_t reduceAllBytes() const { return reduceAllBytes_; }
  // Every rank has a CPU of its own (alike on every rank): a rank that would wait idle can take on work.
  bool cpuPerRank() const { return spin_; }
  size_t stageBytes() const { return stageBytes_; }
  // Takes this rank's staging areas for the current collective from its ring (see the top of this file):
  // `inBytes` and `outBytes` (each at most stageBytes()). Before its first step, and once per collective.
  void stage(size_t inBytes, size_t outBytes);
  // Staging areas of rank r for the current collective (a peer's as its descriptor says: read after its
  // first step).
  unsigned char* stageIn(int r) const;
  unsigned char* stageOut(int r) const;
  // The inline payload (kInlineBytes) of the step about to be published, and a peer's for the current
  // collective's first step. Only for collectives of one step (see begin()).
  unsigned char* nextInline() const { return mine()->lines[(step_ + 1) % kStepLines].payload.bytes; }
  const unsigned char* peerInline(int r) const {
    return peers_[r].control->lines[firstStep_ % kStepLines].payload.bytes;
  }
  // A staged input published before it is all in place (a Broadcast's root copies it in pieces after its
  // first step, while the others copy out what is there): before that step, startStaging() says none is;
  // after each piece, staged() says how many bytes are; waitStaged() waits until a peer's are.
  void startStaging() const;
  void staged(size_t bytes) const;
  void waitStaged(int peer, size_t bytes);
  // Publishes the next step; the first step of a collective also publishes its descriptor. The peers'
  // doorbells ring later: before this rank next waits, or when the collective ends (ringPendingDoorbells).
  void publish(const NodeDescriptor* descriptor = nullptr);
  // Waits until every peer (or one) has published the step we published last. The first wait of a
  // collective also checks that the peers waited for run the same one.
  void waitAll();
  void waitFor(int peer);
  // Waits until one of `pending` (peers) has published the step we published last, takes it out of pending
  // and returns it, checked as waitFor(peer) checks; of several, the first in pending's order. A collective
  // that copies each peer's part on its own reads it as soon as that peer is there: with more ranks than
  // CPUs, a rank waiting for all would give up its CPU while some peers' parts could be copied.
  int waitForAny(std::vector<int>& pending);
  const NodeDescriptor& peerDescriptor(int peer) const;
  // weftMemAlloc buffers (shm_node_memory.cpp). Lists those among op's in our table before its first step
  // (direct collectives only).
  void shareBuffers(const weftBackendOp_v1& op);
  void shareBuffer(const void* buffer, size_t bytes);
  void shareList(const weftBackendBuffer_v1* buffers, size_t numBuffers, size_t elementBytes);
  // Where [address, address + bytes) of a peer lies in our address space, when that peer listed it (see
  // NodeControl::regions); else null and the caller goes through CMA.
  unsigned char* peerMemory(int peer, uint64_t address, size_t bytes);
  // Whether rank (this one or a peer) lists [address, address + bytes) in its table: alike on every rank
  // during a direct collective.
  bool lists(int rank, uint64_t address, size_t bytes) const {
    return listedRegion(rank, address, bytes) != nullptr;
  }
  // Bytes read or written through mapped peer buffers so far (tests check that the path was taken).
  size_t mappedBytes() const { return mappedBytes_; }
  // How a copy into this rank's memory stores its bytes: through the caches, or past them (streamBytes, for
  // results too large to stay in cache; Runner::storesFor). Only a copy from a mapped buffer can choose: the
  // kernel's copy behind CMA stores through the caches.
  enum class Stores { Cached, Streamed };
  void readPeer(int peer, void* dst, uint64_t address, size_t bytes, Stores stores = Stores::Cached);
  // A peer's bytes to read once (to reduce): where they lie when mapped, else read into `piece` (bytes long).
  const unsigned char* peerInput(int peer, uint64_t address, size_t bytes, unsigned char* piece);
  void writePeer(int peer, uint64_t address, const void* src, size_t bytes);
  // The same between lists of ranges, here and in the peer (holding the same number of bytes).
  void readPeerList(int peer, const std::vector<iovec>& local, const std::vector<iovec>& remote);
  void writePeerList(int peer, const std::vector<iovec>& remote, const std::vector<iovec>& local);
  // A peer's ranges where they lie in our address space, when every one is in a buffer the peer listed
  // (mapped); else false.
  bool mapPeerRanges(int peer, const std::vector<iovec>& remote, std::vector<iovec>* mapped);
  void reduce(void* dst, const void* a, const void* b, size_t count, weftDataType_t type, weftRedOp_t op) const {
    reduceKernel_(dst, a, b, count, type, op);
  }
  // A per-comm buffer of at least `bytes`, for chunks read from peers.
  unsigned char* scratch(size_t bytes);
  // A direct batch's tables (runNodeDirectBatch), kept from run to run: this rank's calls (what peers read),
  // a peer's, and every rank's input per call.
  struct BatchTables {
    std::vector<weftBackendBuffer_v1> mine;
    std::vector<weftBackendBuffer_v1> theirs;
    std::vector<uint64_t> sends;
  };
  BatchTables& batchTables() { return batchTables_; }

 private:
  // A peer's weftMemAlloc buffer, mapped here.
  struct PeerRegion {
    SharedRegion region;
    Mapping mapping;
  };
  struct Peer {
    pid_t pid = -1;
    int pidfd = -1;
    Mapping mapping;
    NodeControl* control = nullptr;
    std::vector<PeerRegion> regions;
  };

  NodeControl* mine() const { return static_cast<NodeControl*>(own_.data()); }
  // Whether peer has published `step` (valid while the peer is fewer than kStepLines steps from it).
  bool stepReached(int peer, uint64_t step) const;
  // Waits until every rank has published `step`.
  void waitAllReached(uint64_t step);
  struct RingArea {  // bytes [begin, end) of our staging ring
    size_t begin = 0;
    size_t end = 0;
    bool overlaps(const RingArea& other) const { return begin < other.end && other.begin < end; }
  };
  // How many collectives back lies the latest one before the previous whose staging area overlaps `area` of
  // our ring (0: none). Every peer must be done with it before `area` is written; older ones are, since
  // begin().
  uint64_t latestOverlapping(const RingArea& area) const;
  // The first step of the collective after the one `back` collectives ago (1 <= back <= kSlots, and no
  // further back than collective 0): once every peer has reached it, they are all done with that one.
  uint64_t firstStepAfter(uint64_t back) const { return firstSteps_[(collective_ - back + 1) % kSlots]; }
  // Whether every peer is done with the collective `back` collectives ago; true for 0. Does not wait.
  bool doneWith(uint64_t back) const;
  // Waits, before a collective, until it may use its staging area (see begin() in shm_node.cpp).
  void begin();
  // Touches every page of every rank's segment once (see the top of this file and touchSegments()).
  void touchSegments() const;
  // The start of rank r's staging ring (after its control lines), mapped here.
  unsigned char* ringOf(int r) const;
  // The end of the run of ops[i..] that runMany runs as one batch (i + 1: none), whether it goes direct, and
  // its total count.
  size_t batchEnd(const weftBackendOp_v1* ops, size_t i, size_t numOps, bool* direct, size_t* count) const;
  // Runs body as collective `op` (begin, count, errors).
  template <typename Body>
  weftResult_t runAs(const weftBackendOp_v1& op, Body body);
  // Before the first collective: decides cmaBeatsBounce_ (shm_node_calibrate.cpp), by timing an AllReduce
  // both ways where WEFT_SHM_CMA_COST says to measure, unless rank 0's process timed it at this rank count.
  weftResult_t calibrate();
  // The probe behind calibrate(): rank 0's verdict.
  weftResult_t timeCmaAgainstBounce(uint64_t* verdict);
  // Rank 0's value to every rank, by the node backend's Broadcast.
  weftResult_t shareRank0(uint64_t* value);
  bool allReached(uint64_t step) const;
  void checkDescriptor(int peer) const;
  // Rings the peers' doorbells for the steps published since the last ring (publish).
  void ringPendingDoorbells();
  // Spins, then yields, then sleeps on our doorbell until ready() or the timeout; fails when a peer for which
  // lagging(r) holds has exited (by default: one that has not published our last step).
  template <typename Ready>
  void wait(Ready ready);
  template <typename Ready, typename Lagging>
  void wait(Ready ready, Lagging lagging);
  const SharedRegion* listedRegion(int rank, uint64_t address, size_t bytes) const;
  std::span<const SharedRegion> tableOf(int rank) const {
    const NodeControl* control = peers_[rank].control;
    return {control->regions, std::min<size_t>(control->regionCount, kSharedRegionSlots)};
  }
  // Drops entries of freed buffers from our table; whether any weftMemAlloc buffer is live.
  bool prepareTable();
  // readPeerList/writePeerList with memcpy when every remote range lies in a mapped buffer; else false.
  bool copyMappedList(int peer, bool write, const std::vector<iovec>& local, const std::vector<iovec>& remote);
  Mapping mapPeerRegion(int peer, const SharedRegion& region) const;  // empty (logged) when it cannot be mapped
  [[noreturn]] void failPeer(weftResult_t code, const std::string& message) const;
  [[noreturn]] void cmaFailed(int peer, const char* call, int err) const;
  // "rank 1 (pid 123), rank 2 (pid 124)": every peer whose process has exited.
  std::string exitedPeers() const;

  int rank_;
  int nranks_;
  double timeoutSeconds_;
  void (*reduceKernel_)(void*, const void*, const void*, size_t, weftDataType_t, weftRedOp_t);
  int (*aborted_)(const void*);
  const void* hostComm_;
  CmaCost cmaCost_;
  CmaVerdicts* cmaVerdicts_;          // the context's: what earlier communicators of this process measured
  const weftPluginHost_v1* logHost_;  // for the log lines of connect
  // Throws when Weft aborted the communicator.
  void checkAborted() const;
  size_t stageBytes_;
  size_t reduceAllBytes_;
  bool cma_;  // every rank of the communicator may use CMA
  size_t segmentBytes_;
  int ownFd_ = -1;  // kept open until every peer has opened it (the first run), then closed
  Mapping own_;
  std::vector<Peer> peers_;
  uint64_t step_ = 0;                 // the last step we published
  uint64_t collective_ = 0;           // collectives run so far
  bool firstWait_ = false;            // the next wait is the first of a collective: check descriptors
  bool doorbellsPending_ = false;     // a step was published and the peers' doorbells not yet rung
  uint64_t firstStep_ = 0;            // the step that published the current collective's descriptor
  uint64_t firstSteps_[kSlots] = {};  // the first step of collective n, at n % kSlots
  size_t ringBytes_;                  // of the staging ring
  uint64_t windowCheckedUntil_ = 0;   // begin() need not check collectives before this one (kWindowCheckEvery)
  size_t ringCursor_ = 0;             // where the next collective's staging areas begin
  RingArea ringAreas_[kSlots] = {};   // collective n's areas, at n % kSlots (empty: it staged nothing)
  uint32_t stageIn_ = 0;              // the current collective's areas (kStageAlign units), published with it
  uint32_t stageOut_ = 0;
  bool spin_ = false;  // at most one rank per CPU: waiting may spin before it yields
  bool calibrated_ = false;
  bool cmaBeatsBounce_ = false;  // alike on every rank: see calibrate()
  std::vector<unsigned char> scratch_;
  uint64_t tableReleases_ = 0;                  // sharedReleases() when our table was last checked
  uint64_t tableUse_[kSharedRegionSlots] = {};  // when each slot of our table was last used
  uint64_t tableClock_ = 0;
  size_t mappedBytes_ = 0;
  std::vector<iovec> mappedRanges_;  // copyMappedList's remote ranges, translated
  BatchTables batchTables_;
  std::string error_;
  const weftBackendOp_v1* current_ = nullptr;  // for messages
};

// Runs op on comm (shm_node_colls.cpp); with ownPartPlaced, an AllGather leaves this rank's block of its output
// as it is (runFromCopy). Throws NodeError on failure.
void runNodeCollective(NodeComm& comm, const weftBackendOp_v1& op, bool ownPartPlaced = false);
// Runs AllReduces, AllGathers or ReduceScatters (all one collective, type and op) whose staged inputs fit the
// staging area together in one step, each with exactly the result it gets alone (shm_node_batches.cpp).
// `whole` describes them as one (their total count). Throws NodeError.
void runNodeBatch(NodeComm& comm, const weftBackendOp_v1& whole, const weftBackendOp_v1* ops, size_t numOps);
// Runs AllGathers or ReduceScatters (all one collective, type and op) too large to stage, each by CMA on its
// own buffers as alone, between one first step (every rank publishes a table of its calls) and one last
// (shm_node_batches.cpp). `whole` describes them as one (their total count). Throws NodeError.
void runNodeDirectBatch(NodeComm& comm, const weftBackendOp_v1& whole, const weftBackendOp_v1* ops, size_t numOps);
// Runs an AllReduce over a list of buffers by CMA (shm_node_batches.cpp). Throws NodeError on failure.
void runNodeAllReduceList(NodeComm& comm, const weftBackendOp_v1& op, const weftBackendBuffer_v1* buffers,
                          size_t numBuffers);

// A failure that run() reports with its code and message.
struct NodeError {
  weftResult_t code;
  std::string message;
};

const char* nodeCollName(weftCollType_t coll);

// The backend table the plugin exports (shm_backend.cpp).
extern const weftBackendOps_v1 kNodeBackendOps;

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_NODE_H
