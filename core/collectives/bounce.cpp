// A large AllReduce or Reduce on the shm node backend, in pieces bounced through host memory.
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
#include "core/collectives/bounce.h"

#include <algorithm>
#include <cstring>

#include "core/comm/backend.h"
#include "core/comm/comm.h"
#include "core/comm/lane.h"
#include "core/common/error.h"
#include "core/plugins/host_memory.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {

// A Reduce reads like an AllReduce (every rank reduces its slice out of the peers' inputs) and writes only
// the root's output, so it bounces the same way, the root copying the result out. Measured the same way (np
// 2 / np 4, Weft in us, before -> after): 64 KiB 11.7 -> 5.9 / 84.8 -> 42.0, 1 MiB 70 -> 64 / 353 -> 204,
// 4 MiB 447 -> 274 / 1867 -> 1105, 16 MiB 2762 -> 1467 / 8589 -> 3731; against Open MPI at np 2, 64 KiB
// 0.63 -> 1.23 and 16 MiB 1.25 -> 2.58.
constexpr size_t kBounceFromBytes = size_t{64} << 10;
constexpr size_t kBouncePieceBytes = size_t{512} << 10;

}  // namespace

bool runBouncedOnBackend(Backend& backend, const Op& op, const CollArgs& args) {
  const size_t elementBytes = dataTypeSize(args.type);
  const size_t bytes = args.count * elementBytes;
  const bool reducesInPlace = op.kind == OpKind::AllReduce || op.kind == OpKind::Reduce;
  if (!reducesInPlace || bytes < kBounceFromBytes || !backend.mapsHostMemory()) return false;
  const auto* send = static_cast<const unsigned char*>(args.sendbuff);
  auto* recv = static_cast<unsigned char*>(args.recvbuff);
  // A Reduce's output is the root's alone: the others' recvbuff is not used (and may be NULL).
  const bool writes = op.kind == OpKind::AllReduce || op.comm->rank == args.root;
  const bool direct = isHostMemory(send, bytes) && (!writes || isHostMemory(recv, bytes));
  unsigned char* bounce = direct ? nullptr : laneOf(*op.comm).bounce.reserve(kBouncePieceBytes);
  const size_t pieceCount = kBouncePieceBytes / elementBytes;
  const weftCollType_t coll = op.kind == OpKind::AllReduce ? weftCollAllReduce : weftCollReduce;
  for (size_t lo = 0; lo < args.count; lo += pieceCount) {
    const size_t n = std::min(pieceCount, args.count - lo);
    CollArgs piece = args;
    piece.count = n;
    piece.sendbuff = direct ? send + lo * elementBytes : bounce;
    piece.recvbuff = direct ? (writes ? recv + lo * elementBytes : recv) : bounce;
    if (!direct) std::memcpy(bounce, send + lo * elementBytes, n * elementBytes);
    if (!backend.run(coll, piece, opName(op.kind))) {
      if (lo == 0) return false;  // declined from the start (e.g. no CMA): Weft's algorithms run it all
      fail(weftInternalError, "{}: the {} backend ran the first pieces, then declined one of {} elements",
           opName(op.kind), backend.name(), n);
    }
    if (!direct && writes) std::memcpy(recv + lo * elementBytes, bounce, n * elementBytes);
  }
  return true;
}

}  // namespace weft
