// Collective, point-to-point and group entry points of the C ABI: each builds an Op, checks it and
// submits it.
#include "core/api/guard.h"
#include "core/collectives/submit.h"
#include "core/stream/stream.h"

using namespace weft;

namespace {

weftResult_t call(const char* function, OpKind kind, weftComm_t comm, weftStream_t stream, CollArgs args) {
  return guarded(function, [&] {
    requireStreamOrNull(stream);
    Op op{kind, comm, args};
    validate(op);
    submit(op, stream);
  });
}

CollArgs make(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t type, weftRedOp_t op = weftSum,
              int root = 0) {
  return CollArgs{sendbuff, recvbuff, count, type, op, root};
}

}  // namespace

extern "C" {

WEFT_API weftResult_t weftAllReduce(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                    weftRedOp_t op, weftComm_t comm, weftStream_t stream) {
  return call(__func__, OpKind::AllReduce, comm, stream, make(sendbuff, recvbuff, count, datatype, op));
}

WEFT_API weftResult_t weftBroadcast(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                    int root, weftComm_t comm, weftStream_t stream) {
  return call(__func__, OpKind::Broadcast, comm, stream, make(sendbuff, recvbuff, count, datatype, weftSum, root));
}

WEFT_API weftResult_t weftReduce(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                 weftRedOp_t op, int root, weftComm_t comm, weftStream_t stream) {
  return call(__func__, OpKind::Reduce, comm, stream, make(sendbuff, recvbuff, count, datatype, op, root));
}

WEFT_API weftResult_t weftAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                    weftDataType_t datatype, weftComm_t comm, weftStream_t stream) {
  return call(__func__, OpKind::AllGather, comm, stream, make(sendbuff, recvbuff, sendcount, datatype));
}

WEFT_API weftResult_t weftReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                        weftStream_t stream) {
  return call(__func__, OpKind::ReduceScatter, comm, stream, make(sendbuff, recvbuff, recvcount, datatype, op));
}

WEFT_API weftResult_t weftAllToAll(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                   weftComm_t comm, weftStream_t stream) {
  return call(__func__, OpKind::AllToAll, comm, stream, make(sendbuff, recvbuff, count, datatype));
}

WEFT_API weftResult_t weftSend(const void* sendbuff, size_t count, weftDataType_t datatype, int peer,
                               weftComm_t comm, weftStream_t stream) {
  return call(__func__, OpKind::Send, comm, stream, make(sendbuff, nullptr, count, datatype, weftSum, peer));
}

WEFT_API weftResult_t weftRecv(void* recvbuff, size_t count, weftDataType_t datatype, int peer, weftComm_t comm,
                               weftStream_t stream) {
  return call(__func__, OpKind::Recv, comm, stream, make(nullptr, recvbuff, count, datatype, weftSum, peer));
}

WEFT_API weftResult_t weftBarrier(weftComm_t comm, weftStream_t stream) {
  return call(__func__, OpKind::Barrier, comm, stream, make(nullptr, nullptr, 0, weftUint8));
}

WEFT_API weftResult_t weftGroupStart(void) {
  return guarded(__func__, [] { groupStart(); });
}

WEFT_API weftResult_t weftGroupEnd(void) {
  return guarded(__func__, [] { groupEnd(); });
}

}  // extern "C"
