// The collectives themselves, in Weft's conventions (plugin.h, weftBackendOp_v1): in place when
// sendbuff == recvbuff (AllGather: sendbuff is this rank's block of recvbuff; ReduceScatter: recvbuff is
// this rank's block of sendbuff), Broadcast reads sendbuff on the root only, Reduce writes recvbuff on
// the root only. MPI forbids aliased send and receive buffers except through MPI_IN_PLACE; where MPI's
// in-place layout differs from Weft's, the input goes through a copy instead.
#include <climits>
#include <vector>

#include "common/copy_bytes.h"
#include "mpi_backend.h"
#include "mpi_pieces.h"
#include "mpi_types.h"

namespace weft::mpi {
namespace {

bool isReduction(weftCollType_t coll) {
  return coll == weftCollAllReduce || coll == weftCollReduce || coll == weftCollReduceScatter;
}

bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a);
  auto y = reinterpret_cast<uintptr_t>(b);
  return aBytes > 0 && bBytes > 0 && x < y + bBytes && y < x + aBytes;
}

const unsigned char* bytes(const void* p) { return static_cast<const unsigned char*>(p); }
unsigned char* bytes(void* p) { return static_cast<unsigned char*>(p); }

}  // namespace

bool BackendComm::supports(const weftBackendOp_v1& op) const {
  const size_t maxCall = ctx_->settings().maxCallElements;
  const auto ranks = static_cast<size_t>(info_.nranks);
  if (op.coll == weftCollBarrier) return true;
  if (elementBytes(op.datatype) == 0) return false;
  if (isReduction(op.coll) && !canReduce(op.datatype, op.op)) return false;
  switch (op.coll) {
    case weftCollAllReduce:
    case weftCollBroadcast:
    case weftCollReduce:
      return true;  // any count: cut into pieces of at most maxCall elements
    case weftCollAllGather:
    case weftCollReduceScatter:
    case weftCollAllToAll:
      // One MPI call over blocks of every rank: the whole must fit MPI's int counts (and offsets), or
      // Weft's own algorithms run it.
      return op.count <= maxCall && op.count * ranks <= static_cast<size_t>(INT_MAX);
    default:
      return false;  // Send/Recv go over the transport half of the plugin
  }
}

weftResult_t BackendComm::allReduce(const weftBackendOp_v1& op) {
  const size_t es = elementBytes(op.datatype);
  const bool inPlace = op.sendbuff == op.recvbuff;
  MPI_Datatype type = mpiType(op.datatype);
  MPI_Op mop = mpiOp(op.datatype, op.op);
  weftResult_t r = weftSuccess;
  forEachPiece(op.count, ctx_->settings().maxCallElements, [&](size_t offset, size_t n) {
    const void* send = inPlace ? MPI_IN_PLACE : bytes(op.sendbuff) + offset * es;
    void* recv = bytes(op.recvbuff) + offset * es;
    r = call("MPI_Iallreduce",
             [&](MPI_Request* q) { return MPI_Iallreduce(send, recv, static_cast<int>(n), type, mop, comm_, q); });
    return r == weftSuccess;
  });
  return r;
}

weftResult_t BackendComm::broadcast(const weftBackendOp_v1& op) {
  const size_t es = elementBytes(op.datatype);
  if (info_.rank == op.root && op.sendbuff != op.recvbuff && op.count > 0) {
    copyBytes(op.recvbuff, op.sendbuff, op.count * es);  // apart: core refuses a partial overlap
  }
  MPI_Datatype type = mpiType(op.datatype);
  weftResult_t r = weftSuccess;
  forEachPiece(op.count, ctx_->settings().maxCallElements, [&](size_t offset, size_t n) {
    void* buffer = bytes(op.recvbuff) + offset * es;
    r = call("MPI_Ibcast",
             [&](MPI_Request* q) { return MPI_Ibcast(buffer, static_cast<int>(n), type, op.root, comm_, q); });
    return r == weftSuccess;
  });
  return r;
}

weftResult_t BackendComm::reduce(const weftBackendOp_v1& op) {
  const size_t es = elementBytes(op.datatype);
  const bool root = info_.rank == op.root;
  const bool inPlace = root && op.sendbuff == op.recvbuff;
  MPI_Datatype type = mpiType(op.datatype);
  MPI_Op mop = mpiOp(op.datatype, op.op);
  weftResult_t r = weftSuccess;
  forEachPiece(op.count, ctx_->settings().maxCallElements, [&](size_t offset, size_t n) {
    const void* send = inPlace ? MPI_IN_PLACE : bytes(op.sendbuff) + offset * es;
    void* recv = root ? bytes(op.recvbuff) + offset * es : nullptr;  // ignored off the root
    r = call("MPI_Ireduce", [&](MPI_Request* q) {
      return MPI_Ireduce(send, recv, static_cast<int>(n), type, mop, op.root, comm_, q);
    });
    return r == weftSuccess;
  });
  return r;
}

weftResult_t BackendComm::allGather(const weftBackendOp_v1& op) {
  const size_t es = elementBytes(op.datatype);
  const size_t block = op.count * es;
  const size_t total = block * static_cast<size_t>(info_.nranks);
  const int count = static_cast<int>(op.count);
  MPI_Datatype type = mpiType(op.datatype);
  const void* send = op.sendbuff;
  std::vector<unsigned char> copy;
  if (send == bytes(op.recvbuff) + static_cast<size_t>(info_.rank) * block) {
    send = MPI_IN_PLACE;  // Weft's in-place layout is MPI's
  } else if (overlaps(send, block, op.recvbuff, total)) {
    copy.assign(bytes(send), bytes(send) + block);
    send = copy.data();
  }
  return call("MPI_Iallgather", [&](MPI_Request* q) {
    return MPI_Iallgather(send, count, type, op.recvbuff, count, type, comm_, q);
  });
}

weftResult_t BackendComm::reduceScatter(const weftBackendOp_v1& op) {
  const size_t es = elementBytes(op.datatype);
  const size_t block = op.count * es;
  const size_t total = block * static_cast<size_t>(info_.nranks);
  MPI_Datatype type = mpiType(op.datatype);
  MPI_Op mop = mpiOp(op.datatype, op.op);
  // MPI's in-place ReduceScatter leaves the result at the start of the buffer, Weft's in this rank's
  // block: receive apart, then copy.
  std::vector<unsigned char> result;
  void* recv = op.recvbuff;
  if (overlaps(op.sendbuff, total, op.recvbuff, block)) {
    result.resize(block);
    recv = result.data();
  }
  weftResult_t r = call("MPI_Ireduce_scatter_block", [&](MPI_Request* q) {
    return MPI_Ireduce_scatter_block(op.sendbuff, recv, static_cast<int>(op.count), type, mop, comm_, q);
  });
  if (r == weftSuccess && !result.empty()) copyBytes(op.recvbuff, result.data(), block);
  return r;
}

weftResult_t BackendComm::allToAll(const weftBackendOp_v1& op) {
  const size_t total = op.count * elementBytes(op.datatype) * static_cast<size_t>(info_.nranks);
  const int count = static_cast<int>(op.count);
  MPI_Datatype type = mpiType(op.datatype);
  const void* send = op.sendbuff;
  std::vector<unsigned char> copy;
  if (overlaps(send, total, op.recvbuff, total)) {
    copy.assign(bytes(send), bytes(send) + total);
    send = copy.data();
  }
  return call("MPI_Ialltoall", [&](MPI_Request* q) {
    return MPI_Ialltoall(send, count, type, op.recvbuff, count, type, comm_, q);
  });
}

}  // namespace weft::mpi
