#include <cstdint>
#include <limits>

#include "core/collectives/op.h"
#include "core/comm/comm.h"
#include "core/common/enum_value.h"
#include "core/common/error.h"
#include "core/reduce/reduce.h"

namespace weft {

const char* opName(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
      return "weftAllReduce";
    case OpKind::Broadcast:
      return "weftBroadcast";
    case OpKind::Reduce:
      return "weftReduce";
    case OpKind::AllGather:
      return "weftAllGather";
    case OpKind::ReduceScatter:
      return "weftReduceScatter";
    case OpKind::AllToAll:
      return "weftAllToAll";
    case OpKind::Send:
      return "weftSend";
    case OpKind::Recv:
      return "weftRecv";
    case OpKind::Barrier:
      return "weftBarrier";
  }
  return "?";
}

namespace {

// The two buffers of a collective may share bytes only in the in-place layouts weft.h states: any other
// overlap has the collective read input it has already overwritten, or overwrite what a peer still reads.
// rankOffset: this rank's block's offset in the larger buffer (AllGather's output, ReduceScatter's input).
void requireApartOrInPlace(const Op& op, size_t sendBytes, size_t recvBytes, size_t rankOffset) {
  const auto send = reinterpret_cast<uintptr_t>(op.args.sendbuff);
  const auto recv = reinterpret_cast<uintptr_t>(op.args.recvbuff);
  if (send < recv ? recv - send >= sendBytes : send - recv >= recvBytes) return;  // no byte in common
  const char* layout = "sendbuff == recvbuff";
  bool inPlace = send == recv;
  if (op.kind == OpKind::AllGather) {
    layout = "sendbuff == recvbuff + rank * sendcount * size";
    inPlace = send - recv == rankOffset;
  } else if (op.kind == OpKind::ReduceScatter) {
    layout = "recvbuff == sendbuff + rank * recvcount * size";
    inPlace = recv - send == rankOffset;
  }
  if (inPlace) return;
  fail(weftInvalidArgument,
       "sendbuff {:#x} ({} bytes) and recvbuff {:#x} ({} bytes) overlap; they must be apart, or in place: {}",
       send, sendBytes, recv, recvBytes, layout);
}

}  // namespace

void validate(const Op& op) {
  requireComm(op.comm);
  op.comm->throwIfFailed();
  const CollArgs& a = op.args;
  const int nranks = op.comm->nranks;
  const int rank = op.comm->rank;
  if (op.kind == OpKind::Barrier) return;
  // Read as ints: a C caller may pass any value (core/common/enum_value.h).
  const int type = enumValue(a.type);
  if (type < 0 || type >= WEFT_NUM_DATA_TYPES)
    fail(weftInvalidArgument, "datatype {} is not a weftDataType_t", type);
  bool reduces = op.kind == OpKind::AllReduce || op.kind == OpKind::Reduce || op.kind == OpKind::ReduceScatter;
  const int redOp = enumValue(a.op);
  if (reduces && (redOp < 0 || redOp >= WEFT_NUM_RED_OPS)) {
    fail(weftInvalidArgument, "op {} is not a weftRedOp_t", redOp);
  }
  bool rooted = op.kind == OpKind::Broadcast || op.kind == OpKind::Reduce;
  bool peered = isPointToPoint(op);
  if ((rooted || peered) && (a.root < 0 || a.root >= nranks)) {
    fail(weftInvalidArgument, "{} {} is out of range for a communicator of {} ranks", rooted ? "root" : "peer",
         a.root, nranks);
  }
  // Elements each buffer holds, as multiples of count.
  size_t sendBlocks = 1;
  size_t recvBlocks = 1;
  if (op.kind == OpKind::AllGather) recvBlocks = nranks;
  if (op.kind == OpKind::ReduceScatter) sendBlocks = nranks;
  if (op.kind == OpKind::AllToAll) sendBlocks = recvBlocks = nranks;
  // A multiplication that reports overflow rather than two divisions: this runs for every call, and the
  // divisions were a tenth of a small Send/Recv's own cost.
  size_t largestBuffer = 0;
  if (__builtin_mul_overflow(a.count, dataTypeSize(a.type) * std::max(sendBlocks, recvBlocks), &largestBuffer) ||
      a.count > static_cast<size_t>(std::numeric_limits<int64_t>::max()) / 16) {
    fail(weftInvalidArgument, "count {} is too large: its size in bytes overflows", a.count);
  }
  if (a.count == 0) return;
  bool needsSend = op.kind != OpKind::Recv && !(op.kind == OpKind::Broadcast && rank != a.root);
  bool needsRecv = op.kind != OpKind::Send && !(op.kind == OpKind::Reduce && rank != a.root);
  if (needsSend && a.sendbuff == nullptr) fail(weftInvalidArgument, "sendbuff is NULL with count {}", a.count);
  if (needsRecv && a.recvbuff == nullptr) fail(weftInvalidArgument, "recvbuff is NULL with count {}", a.count);
  if (needsSend && needsRecv) {
    const size_t blockBytes = a.count * dataTypeSize(a.type);
    requireApartOrInPlace(op, blockBytes * sendBlocks, blockBytes * recvBlocks,
                          static_cast<size_t>(rank) * blockBytes);
  }
}

}  // namespace weft
