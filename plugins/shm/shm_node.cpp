#include "shm_node.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "shm_cma.h"
#include "shm_context.h"
#include "shm_cpus.h"
#include "shm_log.h"
#include "shm_socket.h"

namespace weft::shm {
namespace {

constexpr uint32_t kAddressMagic = 0x4e4d5357;  // "WSMN"
// 2: 32 staging slots and 128 step lines (was 8 and 32); 3: the CPU mask; 4: the table of shared buffers;
// 5: a staging ring instead of slots (the descriptor says where), inline inputs of up to 256 bytes;
// 6: WEFT_SHM_CMA_COST; 7: inputs of up to 16 bytes in the descriptor, a staged Broadcast's byte count after
// its step, the window checked every fourth collective, a direct Broadcast's non-roots waiting for the root
// only.
constexpr uint32_t kAddressVersion = 7;
constexpr size_t kControlBytes = size_t{16} * 4096;  // rounded up from sizeof(NodeControl)
static_assert(sizeof(NodeControl) <= kControlBytes);

// What a rank tells the others in its backend address.
struct NodeAddress {
  uint32_t magic;
  uint32_t version;
  int32_t pid;
  int32_t fd;
  uint64_t segmentBytes;
  uint64_t stageBytes;
  uint64_t cookie;
  uint64_t controlAddr;  // where the segment is mapped in the owner: read with CMA to test it
  uint32_t cma;          // 1 when this rank may use CMA
  uint32_t cmaCost;      // CmaCost: every rank must say the same
  // The CPUs this rank may run on (shm_cpus.h): CPU i is bit i % 64 of word i / 64, for the first 512
  // CPUs; the ones beyond are only counted (in the union, as if no other rank had them).
  uint32_t cpusBeyondMask;
  uint64_t cpuMask[kCpuMaskWords];
};
static_assert(sizeof(NodeAddress) <= WEFT_BACKEND_ADDRESS_BYTES);

// How much a collective stages at most (WEFT_SHM_STAGE_BYTES may lower each; ReduceScatter's is that
// setting itself); larger inputs go direct. AllReduce's direct path (bounced through mapped memory by the
// core from 64 KiB) beats staging above 32 KiB; AllGather, AllToAll and Broadcast copy twice staged and once
// direct, yet staging won up to 64 KiB; a staged ReduceScatter copies only the peers' blocks, which beat
// reading them by CMA up to 256 KiB. Measured 2026-11-28 at 2 and 4 ranks: plugins/shm/README.md.
constexpr size_t kReduceStageBytes = size_t{32} * 1024;
constexpr size_t kMoveStageBytes = size_t{64} * 1024;
// With a CPU per rank an AllGather stages blocks of up to 32 KiB only. On the 2-vCPU EPYC Zen 4 box
// (2026-12-01) both ranks' copies into their segments, whose lines the peer had read in the call before, fell
// into a slow mode in most launches (taking the lines back from the other vCPU's cache): np 2, 64 KiB blocks,
// Open MPI / Weft 0.48-0.77 staged against 1.02-1.10 by process_vm_readv; fused groups of 100 x 64 KiB
// within the noise. (With ranks sharing CPUs staging stays far ahead: np 4, 8-32 KiB blocks, 2.99-3.35.)
constexpr size_t kGatherStageBytesWithCpuPerRank = size_t{32} * 1024;
std::string errnoText(int err) { return std::strerror(err); }

}  // namespace

const char* nodeCollName(weftCollType_t coll) {
  switch (coll) {
    case weftCollAllReduce:
      return "allreduce";
    case weftCollAllGather:
      return "allgather";
    case weftCollReduceScatter:
      return "reducescatter";
    case weftCollAllToAll:
      return "alltoall";
    case weftCollBroadcast:
      return "broadcast";
    case weftCollReduce:
      return "reduce";
    case weftCollBarrier:
      return "barrier";
    default:
      return "unsupported";
  }
}

NodeComm::NodeComm(Context* ctx, const weftBackendComm_v1& info)
    : rank_(info.rank),
      nranks_(info.nranks),
      timeoutSeconds_(info.timeoutSeconds),
      reduceKernel_(info.reduce),
      aborted_(info.aborted),
      hostComm_(info.hostComm),
      cmaCost_(ctx->settings().cmaCost),
      cmaVerdicts_(&ctx->cmaVerdicts),
      logHost_(ctx->host()),
      stageBytes_(ctx->settings().stageBytes),
      reduceAllBytes_(ctx->settings().reduceAllBytes),
      cma_(ctx->cmaEnabled()),
      segmentBytes_(kControlBytes + kRingStages * stageBytes_),
      peers_(static_cast<size_t>(info.nranks)),
      ringBytes_(segmentBytes_ - kControlBytes) {
  std::string error;
  ownFd_ = createSegment("weft-shm-node", segmentBytes_, &own_, &error);
  if (ownFd_ < 0) throw NodeError{weftSystemError, error};
  uint64_t cookie = randomWord(this);
  mine()->doorbell.magic = kDoorbellMagic;
  mine()->cookie = cookie;
}

NodeComm::~NodeComm() {
  closeFd(ownFd_);
  for (const Peer& p : peers_) closeFd(p.pidfd);
}

void NodeComm::address(void* out) const {
  NodeAddress a{};
  a.magic = kAddressMagic;
  a.version = kAddressVersion;
  a.pid = static_cast<int32_t>(getpid());
  a.fd = ownFd_;
  a.segmentBytes = segmentBytes_;
  a.stageBytes = stageBytes_;
  a.cookie = mine()->cookie;
  a.controlAddr = reinterpret_cast<uint64_t>(mine());
  a.cma = cma_ ? 1 : 0;
  a.cmaCost = static_cast<uint32_t>(cmaCost_);
  fillCpuMask(a.cpuMask, a.cpusBeyondMask);
  std::memset(out, 0, WEFT_BACKEND_ADDRESS_BYTES);
  std::memcpy(out, &a, sizeof a);
}

bool NodeComm::connect(const unsigned char* addresses) {
  std::vector<NodeAddress> all(peers_.size());
  bool cmaEverywhere = true;
  for (int r = 0; r < nranks_; ++r) {
    std::memcpy(&all[r], addresses + static_cast<size_t>(r) * WEFT_BACKEND_ADDRESS_BYTES, sizeof(NodeAddress));
    const NodeAddress& a = all[r];
    if (a.magic != kAddressMagic || a.version != kAddressVersion) {
      error_ = "rank " + std::to_string(r) + " sent a node address this plugin does not understand";
      return false;
    }
    if (a.stageBytes != stageBytes_ || a.segmentBytes != segmentBytes_) {
      error_ = "rank " + std::to_string(r) + " uses WEFT_SHM_STAGE_BYTES=" + std::to_string(a.stageBytes) +
               ", this rank " + std::to_string(stageBytes_) + ": set it alike on every rank";
      return false;
    }
    if (a.cmaCost != static_cast<uint32_t>(cmaCost_)) {
      error_ = "rank " + std::to_string(r) +
               " has another WEFT_SHM_CMA_COST than this rank: set it alike on every rank";
      return false;
    }
    cmaEverywhere = cmaEverywhere && a.cma == 1;
  }
  // Which sizes go by CMA must be decided alike on every rank: only when every rank allows it.
  cma_ = cmaEverywhere;
  const size_t cpus = cpusBetween(all);
  spin_ = cpus >= static_cast<size_t>(nranks_);
  if (rank_ == 0) {
    logf(logHost_, weftLogDebug, "node backend: %d ranks on %zu CPUs between them: %s", nranks_, cpus,
         spin_ ? "waits spin a while" : "waits yield at once");
  }
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_) continue;
    const NodeAddress& a = all[r];
    Peer& p = peers_[r];
    p.pid = a.pid;
    // The kernel lets us open another process's fd through /proc only with ptrace rights over it: the same
    // rights process_vm_readv needs. Elsewhere (containers, Yama) the backend is not used.
    std::string path = "/proc/" + std::to_string(a.pid) + "/fd/" + std::to_string(a.fd);
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      error_ = "cannot open rank " + std::to_string(r) + "'s segment (" + path + "): " + errnoText(errno);
      return false;
    }
    std::string mapError;
    bool mapped = mapPeerSegment(fd, segmentBytes_, &p.mapping, &mapError);
    closeFd(fd);
    if (!mapped) {
      error_ = "rank " + std::to_string(r) + ": " + mapError;
      return false;
    }
    p.control = static_cast<NodeControl*>(p.mapping.data());
    if (p.control->cookie != a.cookie) {
      error_ = "rank " + std::to_string(r) + "'s segment does not carry the cookie it announced";
      return false;
    }
    p.pidfd = openPidfd(p.pid);
    if (cma_) {
      if (int err = cmaProbe(p.pid, a.controlAddr + offsetof(NodeControl, cookie), a.cookie); err != 0) {
        error_ = "process_vm_readv towards rank " + std::to_string(r) + " fails (" + errnoText(err) +
                 "); set WEFT_SHM_CMA=0 on every rank to run without it";
        return false;
      }
    }
  }
  peers_[rank_].control = mine();
  peers_[rank_].pid = getpid();
  touchSegments();
  return true;
}

unsigned char* NodeComm::ringOf(int r) const {
  return reinterpret_cast<unsigned char*>(peers_[r].control) + kControlBytes;
}

size_t NodeComm::stageLimit(weftCollType_t coll) const {
  switch (coll) {
    case weftCollReduceScatter:
      return stageBytes_;
    case weftCollAllGather:
      return std::min(stageBytes_, cpuPerRank() ? kGatherStageBytesWithCpuPerRank : kMoveStageBytes);
    case weftCollAllToAll:
    case weftCollBroadcast:
      return std::min(stageBytes_, kMoveStageBytes);
    default:
      return std::min(stageBytes_, kReduceStageBytes);
  }
}

bool NodeComm::supports(const weftBackendOp_v1& op) const {
  size_t elementBytes = plugin::elementBytes(op.datatype);
  if (elementBytes == 0) return false;
  size_t stagedBytes = op.count * elementBytes;  // what one rank puts in its staging area
  if (op.coll == weftCollReduceScatter || op.coll == weftCollAllToAll) stagedBytes *= static_cast<size_t>(nranks_);
  switch (op.coll) {
    case weftCollBarrier:
      return true;
    case weftCollAllReduce:
    case weftCollAllGather:
    case weftCollReduceScatter:
    case weftCollAllToAll:
    case weftCollBroadcast:
    case weftCollReduce:
      return stagedBytes <= stageLimit(op.coll) || cma_;
    default:
      return false;
  }
}

template <typename Body>
weftResult_t NodeComm::runAs(const weftBackendOp_v1& op, Body body) {
  if (ownFd_ >= 0) {  // every peer opened it during setup; nothing needs it any more
    closeFd(ownFd_);
    ownFd_ = -1;
  }
  if (!calibrated_) {
    calibrated_ = true;  // first: calibrate() runs its collectives through here
    if (weftResult_t r = calibrate(); r != weftSuccess) return r;
  }
  current_ = &op;
  try {
    begin();
    body();
    ++collective_;
    ringPendingDoorbells();
    return weftSuccess;
  } catch (const NodeError& e) {
    ringPendingDoorbells();
    error_ = e.message;
    return e.code;
  }
}

weftResult_t NodeComm::run(const weftBackendOp_v1& op) {
  return runAs(op, [&] { runNodeCollective(*this, op); });
}

weftResult_t NodeComm::runFromCopy(const weftBackendOp_v1& op) {
  if (op.coll != weftCollAllGather) {
    error_ = std::string("runFromCopy runs allgathers only, not ") + nodeCollName(op.coll);
    return weftInvalidArgument;
  }
  return runAs(op, [&] { runNodeCollective(*this, op, true); });
}

// Lists go by CMA only (their point is to copy nothing more than the direct path does), and only above
// the staging limit, where a packed AllReduce would go direct too.
bool NodeComm::supportsList(const weftBackendOp_v1& op) const {
  size_t elementBytes = plugin::elementBytes(op.datatype);
  return op.coll == weftCollAllReduce && elementBytes > 0 && cma_ && op.count * elementBytes > stageLimit(op.coll);
}

// Staged AllReduces and ReduceScatters reduce every element in rank order, whatever their size and path, and
// staged AllGathers copy: a run of them staged together gives each exactly its own result, with one
// synchronisation for all of them. Direct AllGathers and ReduceScatters (larger than the staging limit) run
// as alone, each on its own buffers, but a run of them shares its first and last steps (with more ranks
// than CPUs, each step costs a round of the scheduler).
size_t NodeComm::batchEnd(const weftBackendOp_v1* ops, size_t i, size_t numOps, bool* direct,
                          size_t* count) const {
  const weftBackendOp_v1& first = ops[i];
  const size_t elementBytes = plugin::elementBytes(first.datatype);
  if (elementBytes == 0 || (first.coll != weftCollAllReduce && first.coll != weftCollAllGather &&
                            first.coll != weftCollReduceScatter)) {
    return i + 1;
  }
  // Bytes one element of a call stages (ReduceScatter: its input's p blocks).
  const size_t stagedPerElement =
      first.coll == weftCollReduceScatter ? elementBytes * static_cast<size_t>(nranks_) : elementBytes;
  *direct = first.count * stagedPerElement > stageLimit(first.coll);
  if (*direct && (first.coll == weftCollAllReduce || !cma_)) return i + 1;
  size_t end = i;
  size_t bytes = 0;
  *count = 0;
  for (; end < numOps; ++end) {
    const weftBackendOp_v1& op = ops[end];
    const size_t opBytes = op.count * stagedPerElement;
    const bool alike = op.coll == first.coll && op.datatype == first.datatype &&
                       (first.coll == weftCollAllGather || op.op == first.op);
    const bool fits = *direct ? opBytes > stageLimit(op.coll) : bytes + opBytes <= stageLimit(op.coll);
    if (!alike || !fits) break;
    bytes += opBytes;
    *count += op.count;
  }
  return end;
}

weftResult_t NodeComm::runMany(const weftBackendOp_v1* ops, size_t numOps) {
  for (size_t i = 0; i < numOps;) {
    const weftBackendOp_v1& first = ops[i];
    bool direct = false;
    size_t count = 0;
    const size_t end = batchEnd(ops, i, numOps, &direct, &count);
    if (end - i < 2) {
      if (weftResult_t r = run(first); r != weftSuccess) return r;
      ++i;
      continue;
    }
    const weftBackendOp_v1 whole{first.coll, nullptr, nullptr, count, first.datatype, first.op, 0};
    weftResult_t r = runAs(whole, [&] {
      if (direct) return runNodeDirectBatch(*this, whole, ops + i, end - i);
      runNodeBatch(*this, whole, ops + i, end - i);
    });
    if (r != weftSuccess) return r;
    i = end;
  }
  return weftSuccess;
}

weftResult_t NodeComm::runList(const weftBackendOp_v1& op, const weftBackendBuffer_v1* buffers,
                               size_t numBuffers) {
  return runAs(op, [&] { runNodeAllReduceList(*this, op, buffers, numBuffers); });
}

void NodeComm::begin() {
  ringAreas_[collective_ % kSlots] = {};  // until it stages
  // Before collective n begins, every peer must be done with collective n - kSlots, whose first step's line
  // and staging area n may reuse: it is once it has begun n - kSlots + 1 (see shm_node.h). Usually true, but
  // a rank that runs ahead (a Broadcast's root) finds that peer's line in the peer's cache, written since it
  // last looked: a transfer per collective. So every kWindowCheckEvery collectives it checks that the peers
  // have begun n - kSlots + kWindowCheckEvery, which holds for the ones until the next check too.
  if (collective_ + 1 < kSlots || collective_ < windowCheckedUntil_) return;
  waitAllReached(firstStepAfter(kSlots - kWindowCheckEvery + 1));
  windowCheckedUntil_ = collective_ + kWindowCheckEvery;
}

unsigned char* NodeComm::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

}  // namespace weft::shm
