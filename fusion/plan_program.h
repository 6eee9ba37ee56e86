// What a compiled plan runs: its operations laid out on lanes, one per stream (docs/plans.md, "Streams").
//
// Each stream's operations run in order on a lane of their own (core/comm/lane.h), beside the other lanes:
// lane 0 on the launching thread, the others on threads of the plan (fusion/plan_executor.h). Every rank lays
// out the same operations on the same lanes, in the same order, so that each lane's collectives meet their
// peers' on the lane's own channel. Two things order operations across lanes:
// - buffers: an operation waits for every earlier one on another lane that writes what it reads or writes,
//   or reads what it writes (found from the byte ranges of the calls, so this part may differ between ranks:
//   a wait only points back in program order, so no wait can close a cycle);
// - the backend: a communicator's backend runs one collective at a time, in the same order on every rank,
//   so the operations that go to it take turns in program order (decided at the first launch, when the
//   backend is set up; the answer is the same on every rank).
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
  uint32_t waitsBegin = 0, waitsEnd = 0;  // its PlanWaits, in PlanProgram::waits
  // Its turn among the steps that go to the backend (program order), -1: none; set at the first launch.
  int64_t backendTurn = -1;
};

struct PlanProgram {
  std::vector<Op> pointToPoint;              // Send/Recv: started before the lanes, finished after them
  std::vector<std::vector<PlanStep>> lanes;  // lane 0 runs on the launching thread
  std::vector<PlanWait> waits;
  // Every step in program order, as (lane, index): for WEFT_CHECK and for the backend's turns.
  std::vector<std::pair<uint32_t, uint32_t>> order;
  bool backendTurnsSet = false;

  size_t bytesHeld() const;
};

// Lays out a plan's launches (in program order; stream: the stream of each, from the classification) on
// lanes: consecutive AllReduces of one lane that are not fused become one operation of independent calls
// (weftBackendListOps_v1.runMany), and each step gets its waits.
PlanProgram layOutPlan(const std::vector<Op>& launches, const std::vector<int>& streamOfLaunch);

// Sets each step's turn at the backend (at the first launch, under the communicator's turn: the first
// collective may set the backend up). Throws as the backend's setup does.
void setBackendTurns(PlanProgram& program);

}  // namespace weft
