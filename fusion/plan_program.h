// What a compiled plan runs: its operations laid out on lanes, one per stream (docs/plans.md, "Streams").
//
// Each stream's operations run in order on a lane of their own (core/comm/lane.h): its own channel, message
// tags, transfer bookkeeping, scratch and fusion buffers. Every rank lays out the same operations on the same
// lanes, in the same order, so that each lane's collectives meet their peers' on the lane's own channel. An
// operation waits for every earlier one on another lane that writes what it reads or writes, or reads what it
// writes (found from the byte ranges of the calls, so this part may differ between ranks: a wait only points
// back in program order, so no wait can close a cycle). Threads run the lanes (fusion/plan_executor.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/collectives/op.h"

namespace weft {

// Wait until lane `lane` has finished `steps` of its steps.
struct PlanWait {
  uint32_t lane;
  uint32_t steps;
};

struct PlanStep {
  Op op;
  // Set when the step runs calls alike but for their buffers (op is then the unit they all instantiate): a
  // reused subgraph's calls are kept as one compiled operation and a pair of pointers each.
  std::vector<CallBuffers> calls;
  uint32_t waitsBegin = 0, waitsEnd = 0;  // its PlanWaits, in PlanProgram::waits
};

struct PlanProgram {
  std::vector<std::vector<PlanStep>> lanes;  // lane 0 runs on the launching thread
  std::vector<PlanWait> waits;
  // Every step in program order, as (lane, index): for WEFT_CHECK.
  std::vector<std::pair<uint32_t, uint32_t>> order;

  size_t bytesHeld() const;
};

// Lays out a plan's launches (in program order, with the stream of each: PlanClassification::streamOf): streams
// take lanes in order of their first operation, at most kMaxLanes (more streams share them in turn);
// consecutive AllReduces of one lane that are not fused and do not depend on each other become one operation
// of independent calls (weftBackendListOps_v1.runMany), kept as one unit and its calls' buffers when they are
// alike but for them; each step gets its waits. Send/Recv are left out.
PlanProgram layOutPlan(const std::vector<Op>& launches, const std::vector<int>& streamOfLaunch);

}  // namespace weft
