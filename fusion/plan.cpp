#include "fusion/plan.h"

#include <fmt/format.h>

#include "core/collectives/check_calls.h"
#include "core/comm/comm.h"
#include "core/common/capacity_bytes.h"
#include "core/common/error.h"
#include "core/common/log.h"

namespace weft {

void PlanRecorder::record(const Op& op, weftStream* stream, uint64_t group) {
  std::lock_guard<std::mutex> lock(mutex_);
  calls_.push_back({op, stream, group});
}

std::vector<RecordedCall> PlanRecorder::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::move(calls_);
}

void PlanRegistry::add(weftPlan* plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  plans_.push_back(plan);
}

void PlanRegistry::remove(weftPlan* plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase(plans_, plan);
}

void PlanRegistry::detachAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (weftPlan* plan : plans_) plan->comm = nullptr;
  plans_.clear();
}

bool RecorderSlot::start() {
  auto fresh = std::make_unique<PlanRecorder>();
  PlanRecorder* expected = nullptr;
  if (!recorder_.compare_exchange_strong(expected, fresh.get())) return false;
  static_cast<void>(fresh.release());  // owned by the slot now
  return true;
}

PlanRun::PlanRun(weftComm& comm, const std::vector<Op>& launches, const std::vector<int>& streamOfLaunch)
    : comm_(comm),
      program_(layOutPlan(launches, streamOfLaunch)),
      executor_(comm, program_, planThreads(comm, program_.lanes.size())) {
  for (const Op& op : launches) {  // counted as the eager calls count
    if (isPointToPoint(op)) {
      pointToPoint_.push_back(op);
      continue;
    }
    ++collectivesPerLaunch_;
    if (!op.members) continue;
    for (const Op& m : *op.members) bytesFusedPerLaunch_ += fusionBytes(m);
  }
  bytesHeld_.store(countBytesHeld(), std::memory_order_relaxed);
}

void PlanRun::run() {
  if (comm_.checkCalls) {
    for (const auto& [lane, index] : program_.order) {
      const PlanStep& step = program_.lanes[lane][index];
      checkSameCall(step.op, step.calls.size());
    }
  }
  if (!algorithmsPinned_) pinAlgorithms();
  struct Recount {  // however the launch ends: the lanes' buffers may have grown
    PlanRun& run;
    ~Recount() { run.bytesHeld_.store(run.countBytesHeld(), std::memory_order_relaxed); }
  } recount{*this};
  executor_.run();
}

void PlanRun::pinAlgorithms() {
  for (const auto& [lane, index] : program_.order) {
    Op& op = program_.lanes[lane][index].op;
    if (!op.members) {
      pinAlgorithm(op);  // a single call, or the unit of identical calls
    } else if (op.independent) {
      auto members = std::make_shared<std::vector<Op>>(*op.members);
      for (Op& m : *members) pinAlgorithm(m);
      op.members = std::move(members);
    }
  }
  algorithmsPinned_ = true;
}

size_t PlanRun::countBytesHeld() const {
  return sizeof(*this) + capacityBytes(pointToPoint_) + program_.bytesHeld() + executor_.bytesHeld();
}

CompiledPlan compilePlan(std::vector<RecordedCall> calls, const FusionSettingOf& settingOf) {
  const PlanLimits limits = planLimitsFromEnvironment();
  CompiledPlan plan;
  plan.recordedOps = calls.size();
  std::vector<Op> ops;
  ops.reserve(calls.size());
  for (const RecordedCall& c : calls) ops.push_back(c.op);
  plan.classification = classifyPlan(ops, limits);
  const PlanClassification& c = plan.classification;
  if (c.streamsUsed > limits.maxStreams) {
    const std::string reuse = limits.reuseLimit == 0
                                  ? std::string("subgraph reuse is off (WEFT_SUBGRAPH_REUSE=0)")
                                  : fmt::format("{} of them reused within WEFT_SUBGRAPH_REUSE's limit of {}",
                                                c.opsReused, limits.reuseLimit);
    fail(weftInvalidUsage,
         "the plan needs {} streams for its {} operations ({} per stream, WEFT_STREAM_CAPACITY; {}), more than "
         "WEFT_MAX_STREAMS={}: set WEFT_SUBGRAPH_REUSE={} to reuse subgraphs for all of them, or raise "
         "WEFT_STREAM_CAPACITY or WEFT_MAX_STREAMS",
         c.streamsUsed, c.numOps, limits.streamCapacity, reuse, limits.maxStreams, c.numOps);
  }
  for (const std::string& reused : c.reused) log::info("plan: one subgraph reused by {}", reused);
  log::info("plan: {} operations, {} streams without reuse, {} with", c.numOps, c.streamsWithoutReuse,
            c.streamsUsed);

  // Each recorded group is fused exactly as weftGroupEnd fuses it, so that a launch computes what the
  // eager calls computed, bit for bit. A fused operation runs on the stream of its first call.
  std::vector<Op> launches;
  std::vector<int> streamOfLaunch;
  for (size_t i = 0; i < calls.size();) {
    const uint64_t group = calls[i].group;
    if (group == 0) {
      streamOfLaunch.push_back(c.streamOf[i]);
      launches.push_back(calls[i++].op);
      continue;
    }
    const size_t first = i;
    FusionPlanner planner(settingOf);
    for (; i < calls.size() && calls[i].group == group; ++i) planner.add({calls[i].op, calls[i].stream});
    for (const std::vector<size_t>& members : planner.takeAll()) {
      streamOfLaunch.push_back(c.streamOf[first + members.front()]);
      launches.push_back(planner.launchOf(members).op);
    }
  }
  if (!launches.empty()) {
    weftComm& comm = *launches.front().comm;
    plan.run = std::make_shared<PlanRun>(comm, launches, streamOfLaunch);
  }
  return plan;
}

}  // namespace weft

size_t weftPlan::resourceBytes() const { return sizeof(*this) + (compiled.run ? compiled.run->bytesHeld() : 0); }
