// The Open MPI peer: the same collectives through MPI_COMM_WORLD, in the same launch as Weft.
#include <mpi.h>

#include <climits>
#include <string>

#include "peer.h"
#include "peer_internal.h"

namespace commperf {

namespace {

// MPI has no float16/bfloat16 type, so reductions on them are n/a (a user-defined op would time our own
// conversion loop, not Open MPI). Collectives that only move data run on them as 16-bit integers.
MPI_Datatype mpiType(weftDataType_t type, bool reduces) {
  switch (type) {
    case weftInt8:
      return MPI_INT8_T;
    case weftUint8:
      return MPI_UINT8_T;
    case weftInt32:
      return MPI_INT32_T;
    case weftUint32:
      return MPI_UINT32_T;
    case weftInt64:
      return MPI_INT64_T;
    case weftUint64:
      return MPI_UINT64_T;
    case weftFloat32:
      return MPI_FLOAT;
    case weftFloat64:
      return MPI_DOUBLE;
    case weftFloat16:
    case weftBfloat16:
      return reduces ? MPI_DATATYPE_NULL : MPI_UINT16_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

// MPI has no average; sum-then-divide would add a local pass Weft does not make, so avg is n/a.
MPI_Op mpiOp(weftRedOp_t op) {
  switch (op) {
    case weftSum:
      return MPI_SUM;
    case weftProd:
      return MPI_PROD;
    case weftMax:
      return MPI_MAX;
    case weftMin:
      return MPI_MIN;
    default:
      return MPI_OP_NULL;
  }
}

int count(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX)) throw PeerError(std::string(what) + ": count above INT_MAX");
  return static_cast<int>(n);
}

class MpiPeer final : public Peer {
 public:
  const char* library() const override { return "mpi"; }

  std::string version() const override {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(text, &length);
    return firstLine(text);  // length counts the terminating NUL
  }

  std::string unsupported(const CollDesc& desc, weftDataType_t type,
                          std::optional<weftRedOp_t> op) const override {
    if (mpiType(type, desc.hasOp) == MPI_DATATYPE_NULL) return "MPI has no float16/bfloat16 reduction";
    if (desc.hasOp && op && mpiOp(*op) == MPI_OP_NULL) return "MPI has no avg op";
    return {};
  }

  std::string algorithm(const CollDesc& desc) const override {
    switch (desc.kind) {
      case CollKind::kAllReduce:
        return "MPI_Allreduce";
      case CollKind::kAllGather:
        return "MPI_Allgather";
      case CollKind::kReduceScatter:
        return "MPI_Reduce_scatter_block";
      case CollKind::kAllToAll:
        return "MPI_Alltoall";
      case CollKind::kBroadcast:
        return "MPI_Bcast";
      case CollKind::kReduce:
        return "MPI_Reduce";
      case CollKind::kSendRecv:
      default:
        return "MPI_Sendrecv";
    }
  }

  // MPI_IN_PLACE, for the collectives whose in-place form reads its input where Weft's does. Not Broadcast:
  // MPI_Bcast has one buffer, so its one form is already the in-place one. (AllToAll and Send/Recv have no
  // in-place form in weft.h.)
  bool hasInPlace(const CollDesc& desc) const override {
    return desc.kind == CollKind::kAllReduce || desc.kind == CollKind::kAllGather ||
           desc.kind == CollKind::kReduce || desc.kind == CollKind::kReduceScatter;
  }

  void callInPlace(const CollDesc& desc, const CallArgs& a) override {
    MPI_Datatype type = mpiType(a.type, desc.hasOp);
    int n = count(a.count, desc.name);
    int rc = MPI_SUCCESS;
    switch (desc.kind) {
      case CollKind::kAllReduce:
        rc = MPI_Allreduce(MPI_IN_PLACE, a.recvbuff, n, type, mpiOp(a.op), MPI_COMM_WORLD);
        break;
      case CollKind::kAllGather:  // this rank's block already at recvbuff + rank * n
        rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a.recvbuff, n, type, MPI_COMM_WORLD);
        break;
      case CollKind::kReduceScatter:  // the whole input at sendbuff, as Weft's; the result lands at its start
        rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, const_cast<void*>(a.sendbuff), n, type, mpiOp(a.op),
                                      MPI_COMM_WORLD);
        break;
      case CollKind::kReduce:  // only the root's input is in place
        rc = MPI_Reduce(a.rank == a.root ? MPI_IN_PLACE : a.sendbuff, a.recvbuff, n, type, mpiOp(a.op), a.root,
                        MPI_COMM_WORLD);
        break;
      default:
        throw PeerError(algorithm(desc) + ": no in-place form");
    }
    check(rc, desc, " (in place)");
  }

  // Weft's in-place ReduceScatter (as NCCL's) leaves the result at the rank's own block of the input, MPI's
  // at the input's start.
  const void* inPlaceResult(const CollDesc& desc, const CallArgs& args) const override {
    return desc.kind == CollKind::kReduceScatter ? args.sendbuff : args.recvbuff;
  }

  void call(const CollDesc& desc, const CallArgs& a) override {
    MPI_Datatype type = mpiType(a.type, desc.hasOp);
    MPI_Op op = mpiOp(a.op);
    MPI_Comm world = MPI_COMM_WORLD;
    int n = count(a.count, desc.name);
    int rc = MPI_SUCCESS;
    switch (desc.kind) {
      case CollKind::kAllReduce:
        rc = MPI_Allreduce(a.sendbuff, a.recvbuff, n, type, op, world);
        break;
      case CollKind::kAllGather:
        rc = MPI_Allgather(a.sendbuff, n, type, a.recvbuff, n, type, world);
        break;
      case CollKind::kReduceScatter:
        rc = MPI_Reduce_scatter_block(a.sendbuff, a.recvbuff, n, type, op, world);
        break;
      case CollKind::kAllToAll:
        rc = MPI_Alltoall(a.sendbuff, n, type, a.recvbuff, n, type, world);
        break;
      case CollKind::kBroadcast:
        // MPI_Bcast has one buffer: the root sends from sendbuff and its recvbuff stays unwritten (not checked,
        // see checksRank); the others receive into recvbuff.
        rc = MPI_Bcast(a.rank == a.root ? const_cast<void*>(a.sendbuff) : a.recvbuff, n, type, a.root, world);
        break;
      case CollKind::kReduce:
        rc = MPI_Reduce(a.sendbuff, a.recvbuff, n, type, op, a.root, world);
        break;
      case CollKind::kSendRecv: {
        int next = (a.rank + 1) % a.nranks;
        int prev = (a.rank + a.nranks - 1) % a.nranks;
        rc = MPI_Sendrecv(a.sendbuff, n, type, next, 0, a.recvbuff, n, type, prev, 0, world, MPI_STATUS_IGNORE);
        break;
      }
    }
    check(rc, desc, "");
  }

  bool checksRank(const CollDesc& desc, int rank, int root) const override {
    if (desc.kind == CollKind::kBroadcast && rank == root) return false;
    return desc.checksRank(rank, root);
  }

 private:
  // Throws PeerError naming the call (and `form`) unless rc is MPI_SUCCESS.
  void check(int rc, const CollDesc& desc, const char* form) const {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw PeerError(algorithm(desc) + form + " failed: " + std::string(text, static_cast<size_t>(length)));
  }
};

}  // namespace

std::unique_ptr<Peer> makeMpiPeer() {
  // Errors come back as codes (and PeerError) instead of aborting inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::make_unique<MpiPeer>();
}

}  // namespace commperf
