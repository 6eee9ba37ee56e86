// MPI's view of Weft's types and reduction ops. The integer and IEEE types map to MPI's predefined ones
// with MPI's predefined ops. MPI has no float16 or bfloat16: each is a 2-byte contiguous derived type of
// its own, reduced by user-defined ops that call Weft's own kernels (weftBackendComm_v1.reduce: they
// combine in float32 and round once, exactly as Weft's algorithms do). 8-bit integer sums use those
// user ops too (Open MPI 4.1 saturates them; see mpi_types.cpp). weftAvg never reaches a backend (Weft
// sums, then divides), so it has no MPI op.
#ifndef WEFT_PLUGINS_MPI_TYPES_H
#define WEFT_PLUGINS_MPI_TYPES_H

#include <mpi.h>

#include <cstddef>

#include "common/element_bytes.h"
#include "weft/plugin.h"

namespace weft::mpi {

using ReduceKernel = void (*)(void* dst, const void* a, const void* b, size_t count, weftDataType_t type,
                              weftRedOp_t op);

using plugin::elementBytes;  // bytes of one element (0 for an unknown type)

// Makes the derived types and user ops (once per process; the caller holds the MPI lock) and remembers
// the kernel the half-precision ops call. MPI_Finalize releases them.
void setUpTypes(ReduceKernel kernel);

// Whether the plugin reduces this (type, op): every predefined pair, and those of the user ops once a
// kernel is known. False for weftAvg and unknown values.
bool canReduce(weftDataType_t type, weftRedOp_t op);

MPI_Datatype mpiType(weftDataType_t type);
MPI_Op mpiOp(weftDataType_t type, weftRedOp_t op);

}  // namespace weft::mpi

#endif  // WEFT_PLUGINS_MPI_TYPES_H
