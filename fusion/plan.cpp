#include "fusion/plan.h"

#include <fmt/format.h>

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

namespace {

// Whether `op` may join a run of independent calls that starts with `first`.
bool joinsRun(const Op& op, const Op& first) {
  return op.kind == OpKind::AllReduce && !op.members && op.args.count > 0 && op.args.type == first.args.type &&
         op.args.op == first.args.op;
}

// Runs of consecutive AllReduces of one type and op that are not fused (calls outside groups) become one
// operation of independent members: a backend may run them in fewer steps, each with its own result
// (weftBackendListOps_v1.runMany), where eager calls pay one step each.
std::vector<Op> independentRuns(const std::vector<Op>& launches) {
  std::vector<Op> out;
  for (size_t i = 0; i < launches.size();) {
    size_t end = i;
    while (end < launches.size() && joinsRun(launches[end], launches[i])) ++end;
    if (end - i < 2) {
      out.push_back(launches[i++]);
      continue;
    }
    Op run = launches[i];
    run.members = std::make_shared<std::vector<Op>>(launches.begin() + static_cast<ptrdiff_t>(i),
                                                    launches.begin() + static_cast<ptrdiff_t>(end));
    run.independent = true;
    out.push_back(std::move(run));
    i = end;
  }
  return out;
}

}  // namespace

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
  // eager calls computed, bit for bit.
  for (size_t i = 0; i < calls.size();) {
    const uint64_t group = calls[i].group;
    if (group == 0) {
      plan.launches->push_back(calls[i++].op);
      continue;
    }
    FusionPlanner planner(settingOf);
    for (; i < calls.size() && calls[i].group == group; ++i) planner.add({calls[i].op, calls[i].stream});
    for (const std::vector<size_t>& members : planner.takeAll())
      plan.launches->push_back(planner.launchOf(members).op);
  }
  *plan.launches = independentRuns(*plan.launches);
  return plan;
}

}  // namespace weft

size_t weftPlan::resourceBytes() const {
  size_t bytes = sizeof(*this) + compiled.launches->capacity() * sizeof(weft::Op);
  for (const weft::Op& op : *compiled.launches) {
    if (op.members) bytes += op.members->capacity() * sizeof(weft::Op);
  }
  return bytes;
}
