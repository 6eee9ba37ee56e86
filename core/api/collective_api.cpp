// Collective, point-to-point and group entry points of the C ABI: each builds an Op, checks it and
// submits it.
#include "core/api/guard.h"
#include "core/collectives/submit.h"
#include "core/stream/stream.h"

using namespace weft;

namespace {

// attr: NULL or a weftOpAttr_t made with WEFT_OP_ATTR_INITIALIZER (of this version or a later one).
int fusionIdOf(const weftOpAttr_t* attr) {
  if (attr == nullptr) return 1;
  if (attr->magic != WEFT_OP_ATTR_MAGIC) {
    fail(weftInvalidArgument,
         "attr: magic 0x{:08x} is not a weftOpAttr_t's (initialize it with WEFT_OP_ATTR_INITIALIZER)",
         attr->magic);
  }
  if (attr->size < sizeof(weftOpAttr_t) || attr->version < 1) {
    fail(weftInvalidArgument, "attr: size {} / version {} is not a weftOpAttr_t of version 1 or later", attr->size,
         attr->version);
  }
  if (attr->fusionId < 0) fail(weftInvalidArgument, "attr: fusionId {} is negative", attr->fusionId);
  return attr->fusionId;
}

weftResult_t call(const char* function, OpKind kind, weftComm_t comm, weftStream_t stream, CollArgs args,
                  const weftOpAttr_t* attr = nullptr) {
  return guarded(function, [&] {
    requireStreamOrNull(stream);
    Op op{kind, comm, args, fusionIdOf(attr), nullptr};
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

WEFT_API weftResult_t weftAllReduceEx(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                      weftRedOp_t op, weftComm_t comm, weftStream_t stream,
                                      const weftOpAttr_t* attr) {
  return call(__func__, OpKind::AllReduce, comm, stream, make(sendbuff, recvbuff, count, datatype, op), attr);
}

WEFT_API weftResult_t weftAllGatherEx(const void* sendbuff, void* recvbuff, size_t sendcount,
                                      weftDataType_t datatype, weftComm_t comm, weftStream_t stream,
                                      const weftOpAttr_t* attr) {
  return call(__func__, OpKind::AllGather, comm, stream, make(sendbuff, recvbuff, sendcount, datatype), attr);
}

WEFT_API weftResult_t weftReduceScatterEx(const void* sendbuff, void* recvbuff, size_t recvcount,
                                          weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                          weftStream_t stream, const weftOpAttr_t* attr) {
  return call(__func__, OpKind::ReduceScatter, comm, stream, make(sendbuff, recvbuff, recvcount, datatype, op),
              attr);
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
