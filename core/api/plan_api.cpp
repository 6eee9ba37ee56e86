// Plan entry points of the C ABI (docs/plans.md).
#include "core/api/guard.h"
#include "core/collectives/submit.h"
#include "core/comm/comm.h"
#include "core/stream/stream.h"
#include "fusion/plan.h"

using namespace weft;

namespace {

void requirePlan(const weftPlan* plan) {
  requireNotNull(plan, "plan");
  if (plan->magic != weftPlan::kLiveMagic) fail(weftInvalidArgument, "plan is not a live weftPlan_t");
}

}  // namespace

extern "C" {

WEFT_API weftResult_t weftPlanBegin(weftComm_t comm) {
  return guarded(__func__, [&] {
    requireComm(comm);
    comm->throwIfFailed();
    if (!comm->recording.start()) fail(weftInvalidUsage, "the communicator is already recording a plan");
  });
}

WEFT_API weftResult_t weftPlanEnd(weftComm_t comm, weftPlan_t* plan) {
  return guarded(__func__, [&] {
    requireComm(comm);
    requireNotNull(plan, "plan");
    *plan = nullptr;
    std::unique_ptr<PlanRecorder> recorder = comm->recording.stop();
    if (!recorder) fail(weftInvalidUsage, "weftPlanEnd without weftPlanBegin on this communicator");
    auto made = std::make_unique<weftPlan>();
    made->comm = comm;
    made->compiled = compilePlan(recorder->take(), fusionSettingOf);
    comm->plans.add(made.get());
    *plan = made.release();
  });
}

WEFT_API weftResult_t weftPlanLaunch(weftPlan_t plan, weftStream_t stream) {
  return guarded(__func__, [&] {
    requirePlan(plan);
    requireStreamOrNull(stream);
    if (plan->comm == nullptr) fail(weftInvalidUsage, "the plan's communicator was destroyed");
    plan->comm->throwIfFailed();
    if (plan->comm->recording.active() != nullptr) {
      fail(weftInvalidUsage, "the plan's communicator is recording a plan: launch after weftPlanEnd");
    }
    launchPlan(plan->compiled.run, plan->compiled.recordedOps, stream);
  });
}

WEFT_API weftResult_t weftPlanGetInfo(weftPlan_t plan, weftPlanInfo_t* info) {
  return guarded(__func__, [&] {
    requirePlan(plan);
    requireNotNull(info, "info");
    if (info->magic != WEFT_PLAN_INFO_MAGIC) {
      fail(weftInvalidArgument,
           "info: magic 0x{:08x} is not a weftPlanInfo_t's (initialize it with WEFT_PLAN_INFO_INITIALIZER)",
           info->magic);
    }
    if (info->size < sizeof(weftPlanInfo_t) || info->version < 1) {
      fail(weftInvalidArgument, "info: size {} / version {} is not a weftPlanInfo_t of version 1 or later",
           info->size, info->version);
    }
    const PlanClassification& c = plan->compiled.classification;
    info->numOps = c.numOps;
    info->numSubgraphs = c.numSubgraphs;
    info->opsReused = c.opsReused;
    info->streamsWithoutReuse = c.streamsWithoutReuse;
    info->streamsUsed = c.streamsUsed;
    info->resourceBytes = plan->resourceBytes();
  });
}

WEFT_API weftResult_t weftPlanDestroy(weftPlan_t plan) {
  return guarded(__func__, [&] {
    requirePlan(plan);
    if (plan->comm != nullptr) plan->comm->plans.remove(plan);
    plan->magic = 0;
    delete plan;  // a launch still queued on a stream holds the run (operations, lanes, threads) until it ends
  });
}

}  // extern "C"
