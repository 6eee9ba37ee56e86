#include "fusion/plan_program.h"

#include <algorithm>
#include <map>

#include "core/comm/comm.h"
#include "core/comm/connections.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {

bool isPointToPoint(const Op& op) { return op.kind == OpKind::Send || op.kind == OpKind::Recv; }

// Whether `op` may join a run of independent calls that starts with `first`.
bool joinsRun(const Op& op, const Op& first) {
  return op.kind == OpKind::AllReduce && !op.members && op.args.count > 0 && op.args.type == first.args.type &&
         op.args.op == first.args.op;
}

// Bytes a step reads or writes, for its waits.
struct ByteRange {
  uintptr_t begin;
  uintptr_t end;
  bool writes;
  uint32_t step;  // in program order
};

void addRange(std::vector<ByteRange>& out, const void* at, size_t bytes, bool writes, uint32_t step) {
  if (at == nullptr || bytes == 0) return;
  const auto begin = reinterpret_cast<uintptr_t>(at);
  out.push_back({begin, begin + bytes, writes, step});
}

// The memory one call reads and writes, as weft.h documents it (on any rank: a root's buffers are counted
// on every rank that passes them, which can only add waits).
void addRangesOf(std::vector<ByteRange>& out, const Op& op, uint32_t step) {
  if (op.members) {
    for (const Op& m : *op.members) addRangesOf(out, m, step);
    return;
  }
  const size_t bytes = op.args.count * dataTypeSize(op.args.type);
  const auto ranks = static_cast<size_t>(op.comm->nranks);
  size_t in = bytes, out_ = bytes;
  switch (op.kind) {
    case OpKind::AllGather:
      out_ = bytes * ranks;
      break;
    case OpKind::ReduceScatter:
      in = bytes * ranks;
      break;
    case OpKind::AllToAll:
      in = out_ = bytes * ranks;
      break;
    case OpKind::Barrier:
      return;
    default:
      break;
  }
  addRange(out, op.args.sendbuff, in, false, step);
  addRange(out, op.args.recvbuff, out_, true, step);
}

// For each step (program order), the earlier steps on other lanes it must wait for: a pair of steps whose
// ranges overlap, one of them writing. Sorted by start, each range meets only those that start inside it.
std::vector<std::vector<uint32_t>> conflicts(std::vector<ByteRange> ranges, const std::vector<uint32_t>& laneOf) {
  std::vector<std::vector<uint32_t>> earlier(laneOf.size());
  std::sort(ranges.begin(), ranges.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
  for (size_t i = 0; i < ranges.size(); ++i) {
    const ByteRange& a = ranges[i];
    for (size_t j = i + 1; j < ranges.size() && ranges[j].begin < a.end; ++j) {
      const ByteRange& b = ranges[j];
      if (laneOf[a.step] == laneOf[b.step] || !(a.writes || b.writes)) continue;
      earlier[std::max(a.step, b.step)].push_back(std::min(a.step, b.step));
    }
  }
  return earlier;
}

}  // namespace

PlanProgram layOutPlan(const std::vector<Op>& launches, const std::vector<int>& streamOfLaunch) {
  PlanProgram program;
  std::map<int, uint32_t> laneOfStream;  // lanes in order of their streams' first step
  std::vector<uint32_t> laneOfStep;      // program order
  std::vector<ByteRange> ranges;
  for (size_t i = 0; i < launches.size();) {
    if (isPointToPoint(launches[i])) {
      program.pointToPoint.push_back(launches[i++]);
      continue;
    }
    // Consecutive calls of one lane that may run as one operation of independent calls (a backend runs them
    // in fewer steps, each with exactly its own result).
    const int stream = streamOfLaunch[i];
    const bool startsRun = joinsRun(launches[i], launches[i]);
    size_t end = i + 1;
    while (startsRun && end < launches.size() && streamOfLaunch[end] == stream &&
           joinsRun(launches[end], launches[i]))
      ++end;
    Op op = launches[i];
    if (end - i >= 2) {
      op.members = std::make_shared<std::vector<Op>>(launches.begin() + static_cast<ptrdiff_t>(i),
                                                     launches.begin() + static_cast<ptrdiff_t>(end));
      op.independent = true;
    }
    i = end;
    auto [it, fresh] = laneOfStream.emplace(stream, static_cast<uint32_t>(laneOfStream.size() % kMaxLanes));
    const uint32_t lane = it->second;
    if (lane >= program.lanes.size()) program.lanes.resize(lane + 1);
    const auto step = static_cast<uint32_t>(program.order.size());
    addRangesOf(ranges, op, step);
    program.order.emplace_back(lane, static_cast<uint32_t>(program.lanes[lane].size()));
    program.lanes[lane].push_back(PlanStep{std::move(op)});
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

void setBackendTurns(PlanProgram& program) {
  if (program.backendTurnsSet) return;
  int64_t next = 0;
  for (const auto& [lane, index] : program.order) {
    PlanStep& step = program.lanes[lane][index];
    step.backendTurn = runsOnBackend(step.op) ? next++ : -1;
  }
  program.backendTurnsSet = true;
}

size_t PlanProgram::bytesHeld() const {
  size_t bytes = sizeof(*this) + pointToPoint.capacity() * sizeof(Op) + waits.capacity() * sizeof(PlanWait) +
                 order.capacity() * sizeof(order[0]) + lanes.capacity() * sizeof(lanes[0]);
  for (const std::vector<PlanStep>& lane : lanes) {
    bytes += lane.capacity() * sizeof(PlanStep);
    for (const PlanStep& step : lane) {
      if (step.op.members) bytes += step.op.members->capacity() * sizeof(Op);
    }
  }
  return bytes;
}

}  // namespace weft
