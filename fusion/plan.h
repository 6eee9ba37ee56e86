// Plans: the calls recorded on a communicator between weftPlanBegin and weftPlanEnd, compiled once into
// the operations to launch (docs/plans.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "fusion/fusion_planner.h"
#include "fusion/plan_compile.h"
#include "fusion/plan_executor.h"
#include "fusion/plan_program.h"

struct weftPlan;

namespace weft {

// A recorded call: the operation, the stream it was issued on (it decides fusion, as in an eager group)
// and the group it belonged to (0: none).
struct RecordedCall {
  Op op;
  weftStream* stream;
  uint64_t group;
};

// Takes the calls of a communicator while it records. Calls may come from several threads.
class PlanRecorder {
 public:
  void record(const Op& op, weftStream* stream, uint64_t group);
  std::vector<RecordedCall> take();

 private:
  std::mutex mutex_;
  std::vector<RecordedCall> calls_;
};

// A communicator's recorder while it records (null otherwise); owns it.
class RecorderSlot {
 public:
  RecorderSlot() = default;
  ~RecorderSlot() { delete recorder_.load(); }
  RecorderSlot(const RecorderSlot&) = delete;
  RecorderSlot& operator=(const RecorderSlot&) = delete;

  PlanRecorder* active() const { return recorder_.load(std::memory_order_acquire); }
  // False when it already records.
  bool start();
  // The recorder, or null when it was not recording.
  std::unique_ptr<PlanRecorder> stop() { return std::unique_ptr<PlanRecorder>(recorder_.exchange(nullptr)); }

 private:
  std::atomic<PlanRecorder*> recorder_{nullptr};
};

// The live plans of a communicator: destroying it detaches them, so that their launches fail with a
// clear error instead of touching the freed communicator.
class PlanRegistry {
 public:
  void add(weftPlan* plan);
  void remove(weftPlan* plan);
  void detachAll();  // each plan's comm becomes null

 private:
  std::mutex mutex_;
  std::vector<weftPlan*> plans_;
};

// What a launch runs: the program and the threads of its lanes. Shared with the launches queued on streams,
// which keep it alive after weftPlanDestroy.
class PlanRun {
 public:
  // launches: in program order, with the stream of each (PlanClassification::streamOf).
  PlanRun(weftComm& comm, const std::vector<Op>& launches, const std::vector<int>& streamOfLaunch);
  // Under the communicator's turn, between the Send/Recv's start and end: WEFT_CHECK's checks in program order,
  // at the first launch each call's algorithm pinned (core/collectives/op.h), then the lanes.
  void run();
  // run(), for runBatch.
  BatchCollectives asBatchCollectives() {
    return {[](void* self) { static_cast<PlanRun*>(self)->run(); }, this};
  }

  weftComm& comm() const { return comm_; }
  // Send/Recv: runBatch starts them before the lanes and waits for them after, as in one group.
  const std::vector<Op>& pointToPoint() const { return pointToPoint_; }
  // What one launch adds to the communicator's statistics (as the eager calls would).
  uint64_t collectivesPerLaunch() const { return collectivesPerLaunch_; }
  uint64_t bytesFusedPerLaunch() const { return bytesFusedPerLaunch_; }
  // What the plan holds, as of its compiling or its latest launch (read while launches run).
  size_t bytesHeld() const { return bytesHeld_.load(std::memory_order_relaxed); }
  uint32_t peakConcurrentSteps() const { return executor_.peakConcurrentSteps(); }
  const PlanProgram& program() const { return program_; }

 private:
  size_t countBytesHeld() const;
  void pinAlgorithms();  // at the first launch

  weftComm& comm_;
  std::vector<Op> pointToPoint_;
  uint64_t collectivesPerLaunch_ = 0;
  uint64_t bytesFusedPerLaunch_ = 0;
  bool algorithmsPinned_ = false;
  PlanProgram program_;
  PlanExecutor executor_;  // after program_: refers to it
  std::atomic<size_t> bytesHeld_{0};
};

// Compiles recorded calls: each recorded group fused as weftGroupEnd would have fused it (with the
// communicator's settings now), the classification, the limits, the lanes. Throws weftInvalidUsage when the
// plan needs more streams than WEFT_MAX_STREAMS allows.
struct CompiledPlan {
  std::shared_ptr<PlanRun> run;  // null for a plan that recorded nothing
  PlanClassification classification;
  size_t recordedOps = 0;
};
CompiledPlan compilePlan(std::vector<RecordedCall> calls, const FusionSettingOf& settingOf);

}  // namespace weft

// What weftPlan_t points to.
struct weftPlan {
  static constexpr uint32_t kLiveMagic = 0x504c414e;  // "PLAN"; cleared on destroy
  uint32_t magic = kLiveMagic;
  weftComm* comm = nullptr;  // null once the communicator is destroyed
  weft::CompiledPlan compiled;
  // Bytes this plan holds: its compiled operations, and its streams' lanes and threads.
  size_t resourceBytes() const;
};
