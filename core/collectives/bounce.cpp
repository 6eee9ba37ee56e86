// A large AllReduce, Reduce or Broadcast on the shm node backend, in pieces bounced through host memory, and an
// AllGather from a copy of its input there.
//
// The backend's direct AllReduce has every rank reduce its slice of the result straight out of the peers'
// inputs and write it into their outputs. On weftMemAlloc memory the peers have mapped, that is memcpy and
// in-place reads; on any other memory it is process_vm_readv/writev, which pins and maps the pages at each
// call and ran at half of memcpy's speed or less on the 2-vCPU EPYC Zen 5 box (a paravirtualised guest).
// So each rank whose buffers are not host memory copies its input into a lane buffer of host memory in
// 512 KiB pieces, the backend runs each piece in place there (the peers map that buffer once), and the rank
// copies the result out: two memcpy in cache per byte instead of the kernel's copies. Ranks whose buffers
// are host memory run each piece on them directly. The pieces are cut by count alone, so every rank runs
// the same collectives whichever kind its buffers are.
//
// Measured (np 2 and np 4 on 2 CPUs, float sum, out of place, heap buffers, commperf against Open MPI in the
// same launch, 2026-11-26): np 2, Weft / Open MPI before -> after: 128 KiB 1.18-1.66 -> 2.79-2.95, 512 KiB
// 1.52-1.91 -> 2.46-3.02, 2 MiB 1.46-1.55 -> 2.15-2.45, 8 MiB 1.23-1.52 -> 2.92-3.15, 32 MiB 9.6-10.2 ms ->
// 5.0-5.1 ms; np 4: 128 KiB 153 -> 64 us, 2 MiB 1.58 -> 0.95 ms, 32 MiB 21.7 -> 13.3 ms. Pieces of 256 KiB
// and of 2 MiB were no better.
//
// Where process_vm_readv is cheap the kernel's copies beat the three memcpy of a piece, and the backend says
// so (weftBackendAdviceOps_v1): the shm backend, where its first collective found CMA faster on a 512 KiB
// AllReduce and every rank has a CPU (plugins/shm/shm_node_calibrate.cpp). Then AllReduces and Reduces of a
// piece to below 16 MiB do not bounce (larger ones on buffers pushed out of the caches went faster bounced).
// 2-vCPU Xeon (KVM), np 2, heap buffers, float sum, inputs rewritten before each call (commperf
// --touch_input), 2026-12-02, two launches each, Weft in us, bounced -> direct: AllReduce 512 KiB 53-54 ->
// 43-44, 1 MiB 128-131 -> 109-118, 4 MiB 650-655 -> 524-537, 16 MiB 2602-2665 -> 2220-2277; Reduce 4 MiB
// 575 -> 465, 16 MiB 2465 -> 1816. Below a piece the bounce stayed ahead (64 KiB 8.1 against 9.0-10.1 us;
// 128-256 KiB within 10 %). With inputs untouched since the call before (as in commperf's default loops)
// direct won by more, 1.3-1.5x, and from 64 KiB. At np 4 on those 2 vCPUs the bounce still won up to 256 KiB
// and lost ~15 % from 1 MiB; there the backend does not measure and keeps advising it.
#include "core/collectives/bounce.h"

#include <algorithm>

#include "core/comm/backend.h"
#include "core/comm/comm.h"
#include "core/comm/lane.h"
#include "core/common/error.h"
#include "core/plugins/host_memory.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"

namespace weft {
namespace {

// A Reduce reads like an AllReduce (every rank reduces its slice out of the peers' inputs) and writes only
// the root's output, so it bounces the same way, the root copying the result out. Measured the same way (np
// 2 / np 4, Weft in us, before -> after): 64 KiB 11.7 -> 5.9 / 84.8 -> 42.0, 1 MiB 70 -> 64 / 353 -> 204,
// 4 MiB 447 -> 274 / 1867 -> 1105, 16 MiB 2762 -> 1467 / 8589 -> 3731; against Open MPI at np 2, 64 KiB
// 0.63 -> 1.23 and 16 MiB 1.25 -> 2.58.
//
// With a CPU per rank, a Reduce bounces from kReduceBounceFromBytesWithCpuPerRank only. Below that, on the
// 2-vCPU EPYC Zen 3 and Zen 4 boxes, the direct path (the root reads the peer's input by process_vm_readv)
// was as fast or faster, and the bounce fell into a slow mode in some launches: the non-root's copy into its
// lane buffer, whose lines the root had read in the call before, took 60-70 us for 256 KiB instead of ~10
// (Zen 4, 2026-12-01; the same copy in a two-process probe took 5-9, 30-40 or 140-160 us from launch to
// launch, the cost of taking the lines back from the other vCPU's cache). Open MPI / Weft, np 2, three
// alternating launches each, bounced -> direct: 128 KiB 0.24-0.79 -> 0.97-1.41, 512 KiB 0.30-1.31 ->
// 0.91-1.38, 2 MiB 0.34-1.44 -> 1.07-1.40; 4 MiB 1.40-1.64 -> 1.16-1.33 and 32 MiB 1.75-2.00 -> 1.23-1.44,
// where the bounce is faster (it streams the root's results past the cache). On the Zen 3 box (2026-11-30)
// direct won from 64 KiB to 4 MiB; on the Zen 5 box, where process_vm_readv ran at half of memcpy's speed,
// the bounce had won from 64 KiB up. Where ranks share CPUs (np 4 on 2) the bounce stays (Zen 4, two
// launches each, bounced against direct: 128 KiB 45-52 against 75-86 us, 512 KiB 112-113 against 195-213 us,
// 2 MiB 0.51-1.35 against 0.95-1.01 ms, 8 MiB 2.7-5.2 against 4.5-5.0 ms).
//
// A Broadcast's peers read only the root's input: the root bounces it, the others run the pieces on their own
// outputs. Where the host's ranks outnumber its CPUs (np 4 on 2 here) every non-root then copies with memcpy
// instead of process_vm_readv: 1 MiB 213-247 -> 133-136 us, 4 MiB 1016-1087 -> 543-555 us, 16 MiB 4.5-5.5 ->
// 2.9-3.5 ms (Open MPI / Weft 1.5 -> 2.2-2.9 at 1 MiB). With a CPU per rank (np 2) the root's extra copy cost
// more than the non-root saved (256 KiB-4 MiB 1.2-1.4x slower; the root already writes part of each output,
// plugins/shm/README.md), so there it does not bounce. Below kBroadcastBounceFromBytes it does not either: on
// the Zen 4 box (np 4 on 2 vCPUs, 2026-12-01, three alternating launches each, Open MPI / Weft bounced against
// direct) 128 KiB read 0.43-0.63 against 0.86-1.12, 256 KiB 0.54-0.60 against 0.78-0.90, 512 KiB 0.42-1.08
// against 0.75-1.11, 1 MiB 0.68-1.37 against 1.13-1.37, and from 2 MiB the bounce won again in most launches
// (8 MiB 1.45-2.20 against 1.01-1.65): the copies through the lane buffer fell into the slow mode described
// for Reduce above.
//
// An AllGather's peers read only its input, and every rank's output takes the same shape, so there are no
// pieces: where the host's ranks outnumber its CPUs a rank whose input is not host memory copies all of it
// (up to kWholeInputMostBytes) into the lane buffer and runs the call on that; the decision is each rank's
// own. np 4 on 2 CPUs, two alternating launches, Weft before -> after (output size): 256 KiB 77-78 -> 36-43
// us, 1 MiB 187-207 -> 95-96 us, 4 MiB 632-813 -> 394-423 us, 16 MiB 3.8-4.2 -> 3.2-3.3 ms (Open MPI / Weft
// 0.96-1.13 -> 2.0-2.5 up to 4 MiB). At np 2 it gained nothing (0.66-1.28 against 0.90-1.06). AllToAll, whose
// input the peers read all but 1/p of, gained nothing at np 4 either (0.80-1.41 against 0.82-1.13).
//
// Results copied out of the lane buffer bypass the caches (streamBytes) when the host's ranks write
// kStreamFromHostBytes of them or more together (a Reduce's root alone): they would not stay in cache until
// the application reads them, and an ordinary store first reads each line of the output from memory. Measured
// (float sum, heap buffers, out of place, 2-vCPU AMD EPYC Zen 3, 2026-11-30, two alternating launches per
// build, Open MPI / Weft in the same launch): np 2 AllReduce 8 MiB 1.75-1.85 -> 2.38-2.45 (Weft 3.6-3.7 ->
// 2.5-2.7 ms), 32 MiB 2.78-2.88 -> 3.51-3.80, Reduce 8 MiB 1.39-1.51 -> 1.60-1.78; np 4 AllReduce 32 MiB
// 3.24-3.33 -> 3.40-4.38, Broadcast 8 MiB 1.69-1.70 -> 1.86-1.95. Not in place: there each piece's output
// lines are the input lines its copy in has just read, still in cache, so ordinary stores hit them and
// streaming only pushed them out (and the caller's next look at its buffer went to memory). 2-vCPU Xeon, np 2,
// bounced (WEFT_SHM_CMA_COST=high), commperf --peer_in_place, two alternating launches, in place, Weft in us,
// streamed -> cached: AllReduce 8 MiB 2184-2380 -> 1382-1389 (Open MPI / Weft 0.66-0.70 -> 0.95-1.01), 32 MiB
// 9702-10055 -> 6761-7439; Reduce 8 MiB 2484-2519 -> 1399-1618, 32 MiB 9296-10076 -> 7276-8395; out of place
// alike (perf/results/xeon/bounce_in_place_1202/). A Reduce's non-roots in place copied their lane buffer
// back too, unchanged, until 2026-12-02: np 4 on the 2 vCPUs, two alternating launches, in place, Weft in us,
// 128 KiB 51-62 -> 36, 512 KiB 186-217 -> 145-168, 2 MiB 956-1086 -> 711-733, 4 MiB 1953-2037 -> 1374-1645
// (perf/results/xeon/reduce_in_place_1202/).
constexpr size_t kBounceFromBytes = size_t{64} << 10;
constexpr size_t kBouncePieceBytes = size_t{512} << 10;
constexpr size_t kWholeInputMostBytes = size_t{4} << 20;
constexpr size_t kReduceBounceFromBytesWithCpuPerRank = size_t{4} << 20;
constexpr size_t kBroadcastBounceFromBytes = size_t{1} << 20;

// An AllGather's input copied into the lane buffer, run from there. In place, the rank's block of recvbuff
// already holds the input: a backend offering runFromCopy leaves it alone; otherwise the call runs out of
// place from the copy, and the backend copies the block back over itself (with stores that bypass the caches,
// at these sizes, over the lines the copy in has just read). np 4 on the 2-vCPU Xeon, in place, four
// alternating launches, Weft in us, copied back -> left alone (output size): 512 KiB alike (90-120, 77-97), 2 MiB
// 559-710 -> 429-481 (Open MPI / Weft 0.87-1.10 -> 1.26-1.73), 8 MiB 2083-2262 -> 1456-1687
// (perf/results/xeon/copied_input_1202/).
bool runGatherFromBounce(Backend& backend, weftComm& comm, const CollArgs& args, size_t bytes) {
  unsigned char* bounce = laneOf(comm).bounce.reserve(std::max(bytes, kBouncePieceBytes));
  copyBytes(bounce, args.sendbuff, bytes);
  CollArgs fromBounce = args;
  fromBounce.sendbuff = bounce;
  const bool inPlace =
      args.sendbuff == static_cast<const unsigned char*>(args.recvbuff) + static_cast<size_t>(comm.rank) * bytes;
  if (inPlace && backend.runFromCopy(weftCollAllGather, fromBounce, "AllGather")) return true;
  return backend.run(weftCollAllGather, fromBounce, "AllGather");
}

// An AllReduce, Reduce or Broadcast in pieces, each rank bouncing what its peers touch of its buffers.
bool runPiecesThroughBounce(Backend& backend, const Op& op, const CollArgs& args) {
  weftComm& comm = *op.comm;
  const size_t elementBytes = dataTypeSize(args.type);
  const size_t bytes = args.count * elementBytes;
  const auto* send = static_cast<const unsigned char*>(args.sendbuff);
  auto* recv = static_cast<unsigned char*>(args.recvbuff);
  const bool root = comm.rank == args.root;
  // What the peers touch of this rank's buffers: every input but a Broadcast's non-roots' (not used, maybe
  // NULL); the outputs of AllReduce and of a Reduce's root. A Broadcast's outputs are written by their own
  // rank (and by the root's process_vm_writev when it shares the work), a Reduce's non-roots' not used.
  const bool peersRead = op.kind != OpKind::Broadcast || root;
  const bool peersWrite = op.kind == OpKind::AllReduce || (op.kind == OpKind::Reduce && root);
  const bool bounceIn = peersRead && !isHostMemory(send, bytes);
  const bool bounceOut = peersWrite && !isHostMemory(recv, bytes);
  // In place, a bounced input is the output too: the piece runs in place in the lane buffer, and only an
  // output the collective changes (the one its peers write) is copied back: not a Broadcast root's, nor a
  // Reduce's non-roots', whose lane the piece leaves as their input was.
  const bool recvInBounce = bounceOut || (bounceIn && send == recv);
  const bool copyOut = recvInBounce && peersWrite;
  // A Reduce's results are written at its root only. In place, each piece's output lines were just read by
  // its copy in and are still in cache, where ordinary stores hit: streaming them would only push them out.
  const bool stream = copyOut && send != recv &&
                      streamsResults(bytes, op.kind == OpKind::Reduce ? 1 : static_cast<size_t>(comm.nranks));
  unsigned char* bounce = bounceIn || bounceOut ? laneOf(comm).bounce.reserve(kBouncePieceBytes) : nullptr;
  auto at = [&](auto* base, size_t element) { return base == nullptr ? base : base + element * elementBytes; };
  const size_t pieceCount = kBouncePieceBytes / elementBytes;
  for (size_t lo = 0; lo < args.count; lo += pieceCount) {
    const size_t n = std::min(pieceCount, args.count - lo);
    CollArgs piece = args;
    piece.count = n;
    piece.sendbuff = bounceIn ? bounce : at(send, lo);
    piece.recvbuff = recvInBounce ? bounce : at(recv, lo);
    if (bounceIn) copyBytes(bounce, at(send, lo), n * elementBytes);
    if (!backend.run(collTypeOf(op.kind), piece, opName(op.kind))) {
      if (lo == 0) return false;  // declined from the start (e.g. no CMA): Weft's algorithms run it all
      fail(weftInternalError, "{}: the {} backend ran the first pieces, then declined one of {} elements",
           opName(op.kind), backend.name(), n);
    }
    if (copyOut) (stream ? streamBytes : copyBytes)(at(recv, lo), bounce, n * elementBytes);
  }
  if (stream) streamFence();
  return true;
}

}  // namespace

bool runBouncedOnBackend(Backend& backend, const Op& op, const CollArgs& args) {
  const size_t bytes = args.count * dataTypeSize(args.type);
  if (bytes < kBounceFromBytes || !backend.prefersHostMemory(collTypeOf(op.kind), args)) return false;
  weftComm& comm = *op.comm;
  // Alike on every rank of the host (the CPUs come from every rank's mask), as the pieces must be.
  const bool cpusShared = comm.hostCpusShared;
  switch (op.kind) {
    case OpKind::AllReduce:
      return runPiecesThroughBounce(backend, op, args);
    case OpKind::Reduce:
      return (cpusShared || bytes >= kReduceBounceFromBytesWithCpuPerRank) &&
             runPiecesThroughBounce(backend, op, args);
    case OpKind::Broadcast:
      return cpusShared && bytes >= kBroadcastBounceFromBytes && runPiecesThroughBounce(backend, op, args);
    case OpKind::AllGather:
      return cpusShared && bytes <= kWholeInputMostBytes && !isHostMemory(args.sendbuff, bytes) &&
             runGatherFromBounce(backend, comm, args, bytes);
    default:
      return false;
  }
}

}  // namespace weft
