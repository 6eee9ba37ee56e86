#include "fusion/plan_program.h"

#include <algorithm>
#include <map>

#include "core/comm/connections.h"
#include "core/common/capacity_bytes.h"
#include "fusion/footprint.h"

namespace weft {
namespace {

// Whether `op` may join a run of independent calls that starts with `first`: AllReduces, AllGathers or
// ReduceScatters, all of one collective, type and (but AllGather) reduce op, as a backend's runMany batches
// them.
bool joinsRun(const Op& op, const Op& first) {
  const bool batched =
      op.kind == OpKind::AllReduce || op.kind == OpKind::AllGather || op.kind == OpKind::ReduceScatter;
  return batched && op.kind == first.kind && !op.members && op.args.count > 0 && op.args.type == first.args.type &&
         (op.kind == OpKind::AllGather || op.args.op == first.args.op);
}

// Bytes a step reads or writes, for its waits.
struct ByteRange {
  Range range;
  bool writes;
  uint32_t step;  // in program order
};

void addRangesOf(std::vector<ByteRange>& out, const Op& op, uint32_t step) {
  if (op.members) {
    for (const Op& m : *op.members) addRangesOf(out, m, step);
    return;
  }
  const Footprint f = footprintOf(op);
  if (f.read.begin != f.read.end) out.push_back({f.read, false, step});
  if (f.written.begin != f.written.end) out.push_back({f.written, true, step});
}

// A run of independent calls: a call joins only if it reads nothing the run writes and writes nothing it
// reads or writes (the backend may stage every call's input before writing any result). Like fusion's, the
// answer depends on where buffers lie, so every rank must record calls with the same dependencies.
class IndependentRun {
 public:
  explicit IndependentRun(const Op& first) : first_(first) { add(first); }
  bool admits(const Op& op) const {
    if (!joinsRun(op, first_)) return false;
    const Footprint f = footprintOf(op);
    return !writes_.overlaps(f.read) && !writes_.overlaps(f.written) && !reads_.overlaps(f.written);
  }
  void add(const Op& op) {
    const Footprint f = footprintOf(op);
    reads_.add(f.read);
    writes_.add(f.written);
  }

 private:
  const Op& first_;
  RangeSet reads_, writes_;
};

// For each step (program order), the earlier steps on other lanes it must wait for: a pair of steps whose
// ranges overlap, one of them writing. Sorted by start, each range meets only those that start inside it.
std::vector<std::vector<uint32_t>> conflicts(std::vector<ByteRange> ranges, const std::vector<uint32_t>& laneOf) {
  std::vector<std::vector<uint32_t>> earlier(laneOf.size());
  std::sort(ranges.begin(), ranges.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.range.begin < b.range.begin; });
  for (size_t i = 0; i < ranges.size(); ++i) {
    const ByteRange& a = ranges[i];
    for (size_t j = i + 1; j < ranges.size() && ranges[j].range.begin < a.range.end; ++j) {
      const ByteRange& b = ranges[j];
      if (laneOf[a.step] == laneOf[b.step] || !(a.writes || b.writes)) continue;
      earlier[std::max(a.step, b.step)].push_back(std::min(a.step, b.step));
    }
  }
  return earlier;
}

// The lane of each launch (Send/Recv: 0, unused).
std::vector<uint32_t> lanesOfStreams(const std::vector<Op>& launches, const std::vector<int>& streamOfLaunch) {
  std::map<int, uint32_t> laneOfStream;
  std::vector<uint32_t> lanes;
  lanes.reserve(launches.size());
  for (size_t i = 0; i < launches.size(); ++i) {
    if (isPointToPoint(launches[i])) {
      lanes.push_back(0);
      continue;
    }
    const auto next = static_cast<uint32_t>(laneOfStream.size() % kMaxLanes);
    lanes.push_back(laneOfStream.emplace(streamOfLaunch[i], next).first->second);
  }
  return lanes;
}

}  // namespace

PlanProgram layOutPlan(const std::vector<Op>& launches, const std::vector<int>& streamOfLaunch) {
  const std::vector<uint32_t> laneOfLaunch = lanesOfStreams(launches, streamOfLaunch);
  PlanProgram program;
  program.lanes.resize(laneOfLaunch.empty() ? 1 : *std::max_element(laneOfLaunch.begin(), laneOfLaunch.end()) + 1);
  std::vector<uint32_t> laneOfStep;  // program order
  std::vector<ByteRange> ranges;
  for (size_t i = 0; i < launches.size();) {
    if (isPointToPoint(launches[i])) {
      ++i;
      continue;
    }
    // Consecutive calls of one lane that may run as one operation of independent calls (a backend runs them
    // in fewer steps, each with exactly its own result).
    const uint32_t lane = laneOfLaunch[i];
    size_t end = i + 1;
    if (joinsRun(launches[i], launches[i])) {
      IndependentRun run(launches[i]);
      for (; end < launches.size() && laneOfLaunch[end] == lane && run.admits(launches[end]); ++end)
        run.add(launches[end]);
    }
    const auto first = launches.begin() + static_cast<ptrdiff_t>(i);
    const auto last = launches.begin() + static_cast<ptrdiff_t>(end);
    PlanStep planStep{*first, {}};
    if (end - i >= 2 && std::all_of(first, last, [&](const Op& m) { return m.args.count == first->args.count; })) {
      for (auto m = first; m != last; ++m) planStep.calls.push_back({m->args.sendbuff, m->args.recvbuff});
    } else if (end - i >= 2) {
      planStep.op.members = std::make_shared<std::vector<Op>>(first, last);
      planStep.op.independent = true;
    }
    const auto step = static_cast<uint32_t>(program.order.size());
    for (auto m = first; m != last; ++m) addRangesOf(ranges, *m, step);
    i = end;
    program.order.emplace_back(lane, static_cast<uint32_t>(program.lanes[lane].size()));
    program.lanes[lane].push_back(std::move(planStep));
    laneOfStep.push_back(lane);
  }
  if (program.lanes.size() < 2) return program;  // one lane: its order is the program's

  const std::vector<std::vector<uint32_t>> earlier = conflicts(std::move(ranges), laneOfStep);
  std::vector<uint32_t> needed(program.lanes.size());  // per lane: steps to wait for (0: none)
  for (size_t s = 0; s < program.order.size(); ++s) {
    if (earlier[s].empty()) continue;
    std::fill(needed.begin(), needed.end(), 0);
    for (uint32_t e : earlier[s]) {
      const auto [lane, index] = program.order[e];
      needed[lane] = std::max(needed[lane], index + 1);
    }
    const auto [lane, index] = program.order[s];
    PlanStep& step = program.lanes[lane][index];
    step.waitsBegin = static_cast<uint32_t>(program.waits.size());
    for (uint32_t l = 0; l < needed.size(); ++l) {
      if (needed[l] > 0) program.waits.push_back({l, needed[l]});
    }
    step.waitsEnd = static_cast<uint32_t>(program.waits.size());
  }
  return program;
}

size_t PlanProgram::bytesHeld() const {
  size_t bytes = sizeof(*this) + capacityBytes(waits) + capacityBytes(order) + capacityBytes(lanes);
  for (const std::vector<PlanStep>& lane : lanes) {
    bytes += capacityBytes(lane);
    for (const PlanStep& step : lane) {
      bytes += capacityBytes(step.calls);
      if (step.op.members) bytes += capacityBytes(*step.op.members);
    }
  }
  return bytes;
}

}  // namespace weft
