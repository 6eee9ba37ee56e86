// WEFT_CHECK=1: before each collective, the ranks exchange a fingerprint of the call they are making
// (number, collective, count, type, op, root) and refuse to run one that differs, naming the ranks and what
// differs. Without it a mismatched call still never writes outside the caller's buffers (sizes are checked
// on receipt), but what fails and where is less clear.
#pragma once

#include "core/collectives/op.h"

namespace weft {

// Throws weftInvalidUsage on every rank when the ranks' calls differ. The caller holds the turn.
// identicalCalls: op stands for that many calls alike but for their buffers (a plan's step, fusion/plan.h).
void checkSameCall(const Op& op, size_t identicalCalls = 0);

}  // namespace weft
