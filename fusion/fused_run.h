// Running a fused operation, by the first of these that applies (fused_run.cpp says when each does): on the
// members' own buffers through the backend's buffer lists or its runMany, or through Weft's rings with
// vectored messages (runRingOnCallBuffers); otherwise its members' inputs packed into a fusion buffer, the
// collective, the result unpacked into each member's output, piece by piece (512 KiB) so that the copies
// stay in cache; small AllReduces on a backend always go that way, into fusion buffers its peers map. Where the members' buffers already lie end to end, the collective runs on them directly
// and that side is not copied.
//
// Layouts, for members i with counts c_i, C = sum c_i, offsets o_i = sum_{j<i} c_j, p ranks:
//   AllReduce      in: member i at o_i                    out: the same
//   AllGather      in: member i at o_i                    out: rank r's member i at r*C + o_i
//   ReduceScatter  in: block r of member i at r*C + o_i   out: member i at o_i
// Each element is reduced by the same algorithm steps as every other element of the fused vector, so the
// result equals the unfused calls' up to the choice of algorithm, which depends on the total size (for
// floats the order of the reduction may differ; integers are exact).
#pragma once

#include "core/collectives/op.h"

namespace weft {

// Runs op (op.members set) on its communicator. The caller holds the turn, which also guards the
// communicator's fusion buffers.
void runFused(const Op& op);

}  // namespace weft
