// Where a checked operation goes: into the open group, or straight to its stream (NULL: run now).
#pragma once

#include <memory>
#include <vector>

#include "core/collectives/op.h"
#include "fusion/fusion_config.h"
#include "fusion/plan.h"

struct weftStream;

namespace weft {

// Inside weftGroupStart/End the op is held until the outermost weftGroupEnd; otherwise it is issued.
void submit(const Op& op, weftStream* stream);
void groupStart();
// Issues everything held, one batch per stream; returns when the NULL-stream batch is done.
void groupEnd();
// Issues a compiled plan (all on one communicator; null: recorded nothing) as one batch on stream (NULL: runs
// now). recordedOps: the calls it stands for, for the statistics.
void launchPlan(const std::shared_ptr<PlanRun>& run, size_t recordedOps, weftStream* stream);
// The fusion setting a communicator has now (what weftGroupEnd and plans fuse with).
FusionSetting fusionSettingOf(const weftComm* comm, size_t slot);

}  // namespace weft
