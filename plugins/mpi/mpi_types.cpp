#include "mpi_types.h"

#include <atomic>
#include <mutex>

namespace weft::mpi {
namespace {

struct KernelTypes {
  MPI_Datatype float16 = MPI_DATATYPE_NULL;
  MPI_Datatype bfloat16 = MPI_DATATYPE_NULL;
  MPI_Op ops[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};  // sum, prod, max, min
};

KernelTypes gKernelTypes;
std::once_flag gKernelOnce;
// MPI's user functions take no user data: the kernel is process-wide (Weft has one reduce entry point).
std::atomic<ReduceKernel> gKernel{nullptr};

// Which Weft type an MPI datatype handed to a user op stands for (only those that use the user ops).
weftDataType_t weftTypeOf(MPI_Datatype datatype) {
  if (datatype == gKernelTypes.bfloat16) return weftBfloat16;
  if (datatype == MPI_INT8_T) return weftInt8;
  if (datatype == MPI_UINT8_T) return weftUint8;
  return weftFloat16;
}

// MPI's contract: inout[i] = in[i] op inout[i]. Weft's kernel: dst[i] = a[i] op b[i], dst may alias b.
template <weftRedOp_t Op>
void kernelReduce(void* in, void* inout, int* len, MPI_Datatype* datatype) {
  gKernel.load()(inout, in, inout, static_cast<size_t>(*len), weftTypeOf(*datatype), Op);
}

// Pairs that MPI's predefined ops do not reduce as Weft does: half precision (MPI has no such types),
// and 8-bit integer sums, which Open MPI 4.1's vectorised op component saturates instead of wrapping
// (measured: int8 100 + 100 gives 127 instead of -56).
bool usesKernel(weftDataType_t type, weftRedOp_t op) {
  return type == weftFloat16 || type == weftBfloat16 || ((type == weftInt8 || type == weftUint8) && op == weftSum);
}

}  // namespace

void setUpTypes(ReduceKernel kernel) {
  if (kernel != nullptr) {
    ReduceKernel none = nullptr;
    gKernel.compare_exchange_strong(none, kernel);
  }
  std::call_once(gKernelOnce, [] {
    // Two distinct types, so that the user function can tell float16 from bfloat16 by the handle.
    MPI_Type_contiguous(2, MPI_BYTE, &gKernelTypes.float16);
    MPI_Type_commit(&gKernelTypes.float16);
    MPI_Type_contiguous(2, MPI_BYTE, &gKernelTypes.bfloat16);
    MPI_Type_commit(&gKernelTypes.bfloat16);
    // Commutative like Weft's ops; MPI may then combine in any order, as Weft's own algorithms do.
    MPI_Op_create(&kernelReduce<weftSum>, 1, &gKernelTypes.ops[weftSum]);
    MPI_Op_create(&kernelReduce<weftProd>, 1, &gKernelTypes.ops[weftProd]);
    MPI_Op_create(&kernelReduce<weftMax>, 1, &gKernelTypes.ops[weftMax]);
    MPI_Op_create(&kernelReduce<weftMin>, 1, &gKernelTypes.ops[weftMin]);
  });
}

bool canReduce(weftDataType_t type, weftRedOp_t op) {
  if (elementBytes(type) == 0 || op < weftSum || op > weftMin) return false;
  return !usesKernel(type, op) || gKernel.load() != nullptr;
}

MPI_Datatype mpiType(weftDataType_t type) {
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
    case weftFloat16:
      return gKernelTypes.float16;
    case weftBfloat16:
      return gKernelTypes.bfloat16;
    case weftFloat32:
      return MPI_FLOAT;
    case weftFloat64:
      return MPI_DOUBLE;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op mpiOp(weftDataType_t type, weftRedOp_t op) {
  if (op < weftSum || op > weftMin) return MPI_OP_NULL;
  if (usesKernel(type, op)) return gKernelTypes.ops[op];
  static const MPI_Op predefined[4] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
  return predefined[op];
}

}  // namespace weft::mpi
