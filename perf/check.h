// Deterministic per-rank inputs and the result check. Inputs are small integers chosen so that every result
// is exact in every type for modest rank counts (sum and avg of values in [-4, 4], products of {-1, 1, 2},
// max/min and data movement over [-100, 100]; unsigned types use the non-negative part); avg of floating
// types is compared with a tolerance, everything else exactly. Integer sum and prod wrap like weft.h says.
#pragma once

#include <cstddef>
#include <optional>

#include "colls.h"
#include "weft/weft.h"

namespace commperf {

struct CheckContext {
  const CollDesc* desc;
  weftDataType_t type;
  std::optional<weftRedOp_t> op;  // set for reducing collectives
  int rank;
  int nranks;
  int root;
  CollCounts counts;
};

// Writes rank `ctx.rank`'s input elements [first, first + count) into buffer. `first` lets several buffers be
// slices of one longer input (--fusion's N buffers), so that a result that lands in the wrong buffer is caught.
void fillInput(const CheckContext& ctx, void* buffer, size_t count, size_t first = 0);

// Fills the output region with a pattern that no correct result matches everywhere (so a call that
// writes nothing is caught).
void poisonOutput(const CheckContext& ctx, void* buffer, size_t count);

// Number of wrong elements among the recvCount results in `recv` (0 where this rank has nothing to check).
// `first`: the inputs were filled from that element on (fillInput's `first`).
size_t countWrong(const CheckContext& ctx, const void* recv, size_t first = 0);

}  // namespace commperf
