#include "fusion/fused_run.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/comm/backend.h"
#include "core/comm/comm.h"
#include "core/comm/comm_channel.h"
#include "core/plugins/host_memory.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"

namespace weft {
namespace {

// Pieces of a packed fused collective: bytes of input or output at most (see runFused).
constexpr size_t kFusionPieceBytes = size_t{512} << 10;

// The fusion buffer `which` of the lane this thread runs on, with at least `bytes`, kept for later fused
// collectives. It is host memory (core/plugins/host_memory.h): on shm the peers map it and read it in place.
unsigned char* fusionBuffer(weftComm& comm, int which, size_t bytes) {
  return laneOf(comm).fusionBuffers[which].reserve(bytes);
}

// Where consecutive members' buffers already lie end to end: the start of the first, else null.
template <typename BufferOf>
const unsigned char* contiguousStart(const std::vector<Op>& members, size_t elemSize, BufferOf bufferOf) {
  const auto* start = static_cast<const unsigned char*>(bufferOf(members.front()));
  const unsigned char* next = start;
  for (const Op& m : members) {
    if (bufferOf(m) != next || next == nullptr) return nullptr;
    next += m.args.count * elemSize;
  }
  return start;
}

void copyPart(void* to, const void* from, size_t bytes) {
  if (bytes > 0 && to != from) copyBytes(to, from, bytes);
}

// A fused AllReduce on the backend copies its results out of the fusion buffer with stores that bypass the
// caches (streamBytes) when the host's ranks copy out kStreamFromHostBytes or more together: a result that
// large does not stay in cache until the application reads it, and an ordinary store first reads each line of
// the calls' buffers from memory. Measured (shm, float sum, out of place, heap buffers each allocated apart, send
// and receive buffers in turn; fused group in us, 2-vCPU AMD EPYC Zen 3 with a 32 MiB L3, 2026-11-30, alternating
// launches): 1000 x 4 KiB, np 4 4561-4967 -> 3723-4360, np 2 1753-1810 -> 1405-1686; but 250 x 4 KiB at np 2
// (2 MB together) 194-283 -> 244-248 and 64 x 4 KiB 47-51 -> 60-78, and at np 4 250 x 4 KiB (4 MB) only
// 714-736 -> 607-645. Not the results of calls in place: their output lines are the input lines the packing
// of the same piece has just read, still in cache, where ordinary stores hit (as core's bounce, see
// core/collectives/bounce.cpp). 1000 x 16 KiB in place, heap buffers, inputs rewritten before each group
// (perf/probes/fused_in_place.c; second 2-vCPU Xeon, 2026-12-02, three alternating launches, median group in
// us), streamed -> cached: np 2 5176-5619 -> 2728-3015, np 4 9976-10564 -> 8874-9150; out of place alike
// (perf/results/xeon/fused_in_place_1202/).
bool streamsFusedResults(const Op& op) {
  return streamsResults(op.args.count * dataTypeSize(op.args.type), static_cast<size_t>(op.comm->nranks));
}

// The first member that may reach into the current piece, and its first element in the fused vector. Pieces
// come in order, so it only moves on: a group of a thousand calls in eight pieces is walked once, not eight
// times.
struct PartCursor {
  size_t member = 0;
  size_t start = 0;
};

// Calls f(member, first element within the member, first element within the piece, elements) for each
// member's part of the piece [lo, hi) of the fused vector (elements), lo at least that of the cursor's last use.
template <typename F>
void forEachPart(const std::vector<Op>& members, PartCursor& cursor, size_t lo, size_t hi, F f) {
  while (cursor.member < members.size() && cursor.start + members[cursor.member].args.count <= lo) {
    cursor.start += members[cursor.member++].args.count;
  }
  size_t start = cursor.start;  // the member's first element in the fused vector
  for (size_t i = cursor.member; i < members.size() && start < hi; ++i) {
    const Op& m = members[i];
    const size_t begin = std::max(lo, start);
    const size_t end = std::min(hi, start + m.args.count);
    if (begin < end) f(m, begin - start, begin - lo, end - begin);
    start += m.args.count;
  }
}

// On a backend, AllReduces averaging less than kPackOnBackendBelowBytes are packed into the lane's fusion
// buffers and run in pieces: those buffers are memory the backend's peers map (weftMemAlloc's kind), so each
// piece takes the shm node backend's mapped direct path, with memcpy and reductions straight out of the
// peers' pieces. Before, the calls ran where they lie: through runMany (a staging step per 32 KiB, each call
// copied in and its result out) up to 8 KiB, as a buffer list by process_vm_readv/writev from 16 KiB.
// Measured (shm, float sum, out of place, N separate heap buffer pairs, 2-vCPU EPYC Zen 5, 2026-11-26; fused
// group in us, before -> after, two launches each): np 2 1000 x 4 KiB 1030-1147 -> 920-970, 250 x 16 KiB
// 694-716 -> 487-490; np 4 1000 x 4 KiB 3549-5462 -> 1818-1826, 250 x 16 KiB 2478-2533 -> 1263-1329.
// Larger calls go as buffer lists (runListInPieces), which read weftMemAlloc buffers where they lie: packing
// them would cost twice that (np 2, 100 x 64 KiB: 339-357 against 629-658 us).
constexpr size_t kPackOnBackendBelowBytes = size_t{64} << 10;

// Pieces are at most this large, so that a lane's fusion buffers stay bounded on hosts with many ranks (a
// bound on memory; no piece that large was measured).
constexpr size_t kMostPieceBytes = size_t{16} << 20;

// Pieces of a fused AllReduce on a backend's buffer lists when no rank copies its calls (listPieceBytes): 2 MiB
// at np 2, growing with the square of the ranks, since each piece pays the list's two steps and the exchange
// of the lists, which grow with them.
size_t mappedListPieceBytes(size_t ranks) {
  return std::min(kMostPieceBytes, 4 * kFusionPieceBytes * std::max<size_t>(1, ranks * ranks / 4));
}

// Pieces of a fused AllReduce on a backend's buffer lists when some rank copies its calls into its fusion
// buffer: the copies in and out, and the peers' reads of that buffer, then stay in cache. Measured (shm, float
// sum, out of place, heap buffers, fused group in us, 2-vCPU AMD EPYC Zen 3 with a 32 MiB L3, 2026-11-29,
// alternating launches): np 4, 100 x 64 KiB 8569-8656 in 8 MiB pieces (the earlier size at np 4), 4687-5002 in
// 2 MiB, 5046-5305 in 512 KiB; 10 x 1 MiB 12815 in 8 MiB, 11364 in 4 MiB, 8349 in 2 MiB; np 3 (4 MiB before),
// 100 x 64 KiB 5788 in 4 MiB, 4414 in 2 MiB, 6752 in 8 MiB. On the Zen 5 box 2 MiB was no slower than 8 MiB
// for heap buffers at np 4 either (2178-3127 against 2968-3143, 2026-11-26).
constexpr size_t kBouncedListPieceBytes = size_t{2} << 20;

// Whether every call of op lies, on this rank, in memory the peers map (nothing to copy into the fusion buffer).
bool callsInHostMemory(const Op& op) {
  const size_t elem = dataTypeSize(op.args.type);
  return std::all_of(op.members->begin(), op.members->end(), [&](const Op& m) {
    const size_t bytes = m.args.count * elem;
    return bytes == 0 || (isHostMemory(m.args.sendbuff, bytes) && isHostMemory(m.args.recvbuff, bytes));
  });
}

// Whether ranks list their calls' parts where they lie whatever memory they are, for the backend to reach by
// CMA, rather than copy heap parts into their fusion buffers: where the backend advises that a piece runs as
// fast on any memory (Backend::prefersHostMemory: the shm backend where its first collective found large
// AllReduces faster by CMA than bounced). Alike on every rank, as the advice is.
bool listsEveryPart(const Backend& backend, const Op& op) {
  CollArgs whole = op.args;
  if (whole.op == weftAvg) whole.op = weftSum;
  return !backend.prefersHostMemory(weftCollAllReduce, whole);
}

// Bytes of one piece of runListInPieces, alike on every rank. Larger pieces when no rank copies anything:
// a piece then costs the list's two steps and the exchange of the lists, which on mapped buffers cost more than
// the copies in cache save (weftMemAlloc buffers, np 4, 100 x 64 KiB: 1207-1392 us in 8 MiB pieces, 1746-2775 in
// 2 MiB, Zen 5, 2026-11-26; 3259-3484 against 3552-4082 on the Zen 3 box). Whether some rank copies is each
// rank's own, so the ranks tell each other (one small AllGather), unless the cut is the same either way.
size_t listPieceBytes(const Op& op, bool listsEvery) {
  weftComm& comm = *op.comm;
  const size_t mappedPieceBytes = mappedListPieceBytes(static_cast<size_t>(comm.nranks));
  if (listsEvery) return mappedPieceBytes;  // nobody copies
  const size_t totalBytes = op.args.count * dataTypeSize(op.args.type);
  if (mappedPieceBytes <= kBouncedListPieceBytes || totalBytes <= kBouncedListPieceBytes) {
    return std::min(mappedPieceBytes, kBouncedListPieceBytes);
  }
  struct BufferKinds {
    uint32_t allInHostMemory;
  };
  const std::vector<BufferKinds> all =
      allGatherRecords(comm, BufferKinds{callsInHostMemory(op) ? 1u : 0u}, "fused allreduce's buffer kinds");
  const bool noneCopies =
      std::all_of(all.begin(), all.end(), [](const BufferKinds& k) { return k.allInHostMemory; });
  return noneCopies ? mappedPieceBytes : kBouncedListPieceBytes;
}

// A fused AllReduce on the backend's buffer lists, in pieces cut by count alone (alike on every rank). Each
// rank lists, per piece, the parts of its calls that lie in host memory (weftMemAlloc's kind, which the
// peers map) where they are, and copies the others into its fusion buffer (host memory too), listed as one
// in-place buffer, copying the results back after the piece. numBuffers may differ between ranks (the
// plugin ABI allows it), so each rank decides for its own buffers; before, heap calls went as a list by
// process_vm_readv/writev. The pieces: listPieceBytes. Measured before (shm, float sum, out of place, 2-vCPU EPYC
// Zen 5, 2026-11-26, alternating launches; fused group in us):
// - heap buffers, np 2: 100 x 64 KiB 1166-1815 as a CMA list -> 747-827 in 512 KiB pieces, 703-727 in
//   2 MiB ones; 10 x 1 MiB 1842-2625 -> 1075-1256 in 512 KiB, 1270-1434 in 2 MiB. np 4: 100 x 64 KiB
//   4174-5869 -> 2178-3127 in 2 MiB pieces, 2968-3143 in 8 MiB; 10 x 1 MiB 6158-6218 -> 3467-3789, 3517-3551.
// - weftMemAlloc buffers, np 2: 100 x 64 KiB 324-431 whole, 433-532 in 512 KiB pieces, 435-445 in 2 MiB
//   (470-480 whole in that hour); np 4: 1375-1475 whole, 1207-1392 in 8 MiB pieces, 1746-2775 in 2 MiB.
void runListInPieces(Backend& backend, const Op& op) {
  weftComm& comm = *op.comm;
  const std::vector<Op>& members = *op.members;
  const size_t elem = dataTypeSize(op.args.type);
  const size_t total = op.args.count;
  // Pieces of equal size, so that none falls below the backend's list threshold when the whole is above.
  const bool listsEvery = listsEveryPart(backend, op);
  const size_t pieceBytes = listPieceBytes(op, listsEvery);
  const size_t pieceLimit = std::max<size_t>(1, pieceBytes / elem);
  const size_t pieces = (total + pieceLimit - 1) / pieceLimit;
  const size_t pieceElems = (total + pieces - 1) / pieces;
  struct CopyBack {
    unsigned char* to;
    const unsigned char* from;
    size_t bytes;
    bool inPlace;  // `to` is the part's input too (see streamsFusedResults)
  };
  std::vector<CopyBack> copyBacks;
  const bool stream = streamsFusedResults(op);
  std::vector<weftBackendBuffer_v1>& buffers = comm.backendBuffers;  // kept: no allocation next time
  // The fusion buffer, reserved at the first part that needs it, a whole piece at once (as runFused's), so
  // that it stops growing (each time a new buffer for the peers to map) after the first fused collective.
  unsigned char* bounce = nullptr;
  PartCursor cursor;
  for (size_t lo = 0; lo < total; lo += pieceElems) {
    const size_t hi = std::min(total, lo + pieceElems);
    buffers.clear();
    copyBacks.clear();
    bool lastBounced = false;  // the list's last entry is in the fusion buffer, ending where the next goes
    forEachPart(members, cursor, lo, hi, [&](const Op& m, size_t at, size_t to, size_t len) {
      const auto* send = static_cast<const unsigned char*>(m.args.sendbuff) + at * elem;
      auto* recv = static_cast<unsigned char*>(m.args.recvbuff) + at * elem;
      const size_t bytes = len * elem;
      if (listsEvery || (isHostMemory(send, bytes) && isHostMemory(recv, bytes))) {
        buffers.push_back({send, recv, len});
        lastBounced = false;
        return;
      }
      if (bounce == nullptr) bounce = fusionBuffer(comm, 0, pieceBytes);
      unsigned char* slot = bounce + to * elem;
      copyBytes(slot, send, bytes);
      copyBacks.push_back({recv, slot, bytes, recv == send});
      if (lastBounced) {
        buffers.back().count += len;
      } else {
        buffers.push_back({slot, slot, len});
      }
      lastBounced = true;
    });
    runListOnBackend(backend, op, hi - lo, buffers);
    for (const CopyBack& c : copyBacks) (stream && !c.inPlace ? streamBytes : copyBytes)(c.to, c.from, c.bytes);
  }
  if (stream) streamFence();
  finishFusedAverages(op);
}

// Calls averaging kVectoredMinAverageBytes or more (of each rank's input to AllReduce and AllGather, of its
// output from ReduceScatter) run through Weft's rings on their buffers, as vectored messages
// (runRingOnCallBuffers), where the tuner picks a bandwidth algorithm for the total:
// measured (tcp, float sum, out of place, 1000 calls of 4 KiB, 2026-11-23, 2-vCPU AMD EPYC) packing then
// cost 1.3-1.7 ms of a 4.5-5 ms fused AllReduce at np 2. Smaller calls make pieces that cost more in the
// transport's iovecs than they save in copies.
constexpr size_t kVectoredMinAverageBytes = size_t{1} << 10;

// Runs op on its calls' own buffers where it pays (see the constants above); false, having run nothing,
// otherwise.
bool runOnCallBuffers(const Op& op, size_t averageBytes) {
  if (op.kind == OpKind::AllReduce && averageBytes >= kPackOnBackendBelowBytes) {
    if (Backend* backend = listBackendFor(op)) {
      runListInPieces(*backend, op);
      return true;
    }
  }
  // AllGathers and ReduceScatters of any size go to a backend that takes them as their calls (runMany):
  // packed ones (the output N times the input) lost to the unfused calls at every size measured (shm, float,
  // 2026-11-23, 2-vCPU EPYC; unfused / packed fused: 1000 x 4 KiB 0.63-0.66 at np 2, 0.78-0.86 at np 4;
  // 100 x 64 KiB 0.78-0.84 at np 2 and 4), since each call alone takes the node backend's direct path.
  if (op.kind != OpKind::AllReduce && runMembersOnBackend(op)) return true;
  return averageBytes >= kVectoredMinAverageBytes && runRingOnCallBuffers(op);
}

}  // namespace

void runFused(const Op& op) {
  const size_t averageBytes = op.args.count * dataTypeSize(op.args.type) / op.members->size();
  const bool packOnBackend =
      op.kind == OpKind::AllReduce && averageBytes < kPackOnBackendBelowBytes && runsOnBackend(op);
  if (!packOnBackend && runOnCallBuffers(op, averageBytes)) return;
  weftComm& comm = *op.comm;
  const std::vector<Op>& members = *op.members;
  const size_t elem = dataTypeSize(op.args.type);
  const size_t total = op.args.count;  // C, elements
  const auto ranks = static_cast<size_t>(comm.nranks);
  // Per element of the fused vector, bytes of input and of output.
  const size_t inStride = op.kind == OpKind::ReduceScatter ? elem * ranks : elem;
  const size_t outStride = op.kind == OpKind::AllGather ? elem * ranks : elem;

  // AllReduce and AllGather inputs lying end to end are used where they are; AllReduce and
  // ReduceScatter outputs too, unless that range partly overlaps the input (a collective's buffers are
  // either the same or apart).
  const unsigned char* directIn = nullptr;
  if (op.kind != OpKind::ReduceScatter)
    directIn = contiguousStart(members, elem, [](const Op& m) { return m.args.sendbuff; });
  unsigned char* directOut = nullptr;
  if (op.kind != OpKind::AllGather) {
    auto* start =
        const_cast<unsigned char*>(contiguousStart(members, elem, [](const Op& m) { return m.args.recvbuff; }));
    const bool apart = directIn == nullptr || start == nullptr || start + total * outStride <= directIn ||
                       directIn + total * inStride <= start;
    if (start != nullptr && (start == directIn || apart)) directOut = start;
  }

  // On a backend (shared memory) the fused vector runs in pieces of 512 KiB of input or output, so that
  // packing, the collective and unpacking work in cache. Weft's message-passing algorithms (TCP) take pieces
  // at 2 ranks only: beyond, a piece's latency over the network costs more than the copies that stay in
  // cache save. Measured, 1000 x 4 KiB AllReduces: shm at np 2, 0.93 ms in 128-512 KiB pieces, 1.05 ms in
  // 1 MiB ones, 1.15 ms whole; tcp (2026-11-22): np 2 1.63 ms in 512 KiB pieces, 2.04 in 1 MiB, 1.90 whole;
  // np 3 6.8 ms in 512 KiB, 5.7 in 4 MiB, 5.1 whole; np 4 7.5 ms in 2 MiB, 5.9 in 8 MiB, 5.8 whole. Until
  // 2026-11-29 the backend's pieces grew with the square of the ranks as well (2 MiB at np 4), which cost
  // more than the pieces' latency saved: shm np 4, 2-vCPU AMD EPYC Zen 3, fused group in us, five alternating
  // launches of 1000 x 4 KiB, 2 MiB 4644-5694 us (fused / single 1.54-1.66), 512 KiB 4239-5000 (1.28-1.40);
  // 250 x 16 KiB 4231-4695 -> 3595-3627, 4000 x 1 KiB 10005-10163 -> 7336-7766 (two each); np 3, 1 MiB and
  // 512 KiB alike (3 each). The pieces depend only on what every rank has alike, never on where this rank's
  // buffers lie, so that every rank runs the same collectives.
  const bool inPieces = ranks == 2 || runsOnBackend(op);
  const bool stream = packOnBackend && streamsFusedResults(op);
  const size_t pieceBytes = inPieces ? kFusionPieceBytes : SIZE_MAX;
  const size_t pieceElems = std::min(total, std::max<size_t>(1, pieceBytes / std::max(inStride, outStride)));
  // Whole pieces are reserved at once, so that the fusion buffers stop growing (each time a new buffer for
  // the peers to map) after the first fused collective.
  auto bufferBytes = [&](size_t stride) { return std::max(pieceElems * stride, inPieces ? pieceBytes : 0); };
  unsigned char* packedIn = directIn == nullptr ? fusionBuffer(comm, 0, bufferBytes(inStride)) : nullptr;
  // A packed AllReduce input is reduced in place; the other collectives' outputs have other shapes.
  unsigned char* packedOut = nullptr;
  if (directOut == nullptr) {
    packedOut = op.kind == OpKind::AllReduce && packedIn != nullptr
                    ? packedIn
                    : fusionBuffer(comm, 1, bufferBytes(outStride));
  }

  PartCursor cursor;
  for (size_t lo = 0; lo < total; lo += pieceElems) {
    const size_t hi = std::min(total, lo + pieceElems);
    const size_t n = hi - lo;
    if (packedIn != nullptr) {
      forEachPart(members, cursor, lo, hi, [&](const Op& m, size_t at, size_t to, size_t len) {
        const auto* from = static_cast<const unsigned char*>(m.args.sendbuff);
        if (op.kind != OpKind::ReduceScatter) return copyPart(packedIn + to * elem, from + at * elem, len * elem);
        for (size_t r = 0; r < ranks; ++r) {
          copyPart(packedIn + (r * n + to) * elem, from + (r * m.args.count + at) * elem, len * elem);
        }
      });
    }
    Op piece = op;
    piece.members.reset();
    piece.args.count = n;
    piece.args.sendbuff = packedIn != nullptr ? packedIn : directIn + lo * elem;
    piece.args.recvbuff = packedOut != nullptr ? packedOut : directOut + lo * elem;
    runCollective(piece);
    if (packedOut == nullptr) continue;
    forEachPart(members, cursor, lo, hi, [&](const Op& m, size_t at, size_t from, size_t len) {
      auto* to = static_cast<unsigned char*>(m.args.recvbuff);
      if (stream && to != m.args.sendbuff) return streamBytes(to + at * elem, packedOut + from * elem, len * elem);
      if (op.kind != OpKind::AllGather) return copyPart(to + at * elem, packedOut + from * elem, len * elem);
      for (size_t r = 0; r < ranks; ++r) {
        copyPart(to + (r * m.args.count + at) * elem, packedOut + (r * n + from) * elem, len * elem);
      }
    });
  }
  if (stream) streamFence();
}

}  // namespace weft
