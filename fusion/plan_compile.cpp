#include "fusion/plan_compile.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "core/common/config.h"
#include "core/common/error.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {

int ceilDiv(int a, int b) { return (a + b - 1) / b; }

using SubgraphKey = std::tuple<OpKind, size_t, weftDataType_t, weftRedOp_t, int, const weftComm*, int>;

SubgraphKey keyOf(const Op& op) {
  return {op.kind, op.args.count, op.args.type, op.args.op, op.args.root, op.comm, op.fusionId};
}

std::string describe(const Op& op) {
  return fmt::format("{} count {} {} op {} root {} fusion id {}", opName(op.kind), op.args.count,
                     dataTypeName(op.args.type), static_cast<int>(op.args.op), op.args.root, op.fusionId);
}

}  // namespace

PlanLimits planLimitsFromEnvironment() {
  PlanLimits limits;
  long reuse = config::getInt("WEFT_SUBGRAPH_REUSE", -1);
  if (reuse < -1 || reuse > 1 << 30) {
    fail(weftInvalidArgument, "WEFT_SUBGRAPH_REUSE={} is not -1 (reuse up to 1000 operations), 0 (off) or a limit",
         reuse);
  }
  limits.reuseLimit = reuse == -1 ? 1000 : static_cast<int>(reuse);
  long capacity = config::getInt("WEFT_STREAM_CAPACITY", 3);
  if (capacity < 1 || capacity > 1 << 20)
    fail(weftInvalidArgument, "WEFT_STREAM_CAPACITY={} is not >= 1", capacity);
  limits.streamCapacity = static_cast<int>(capacity);
  long streams = config::getInt("WEFT_MAX_STREAMS", 64);
  if (streams < 1 || streams > 1 << 20) fail(weftInvalidArgument, "WEFT_MAX_STREAMS={} is not >= 1", streams);
  limits.maxStreams = static_cast<int>(streams);
  return limits;
}

PlanClassification classifyPlan(std::span<const Op> calls, const PlanLimits& limits) {
  PlanClassification c;
  c.numOps = static_cast<int>(calls.size());
  // Keys in order of first appearance, with their number of calls.
  std::map<SubgraphKey, size_t> position;
  std::vector<std::pair<const Op*, int>> groups;
  std::vector<size_t> groupOf;  // per call
  groupOf.reserve(calls.size());
  for (const Op& op : calls) {
    auto [it, fresh] = position.emplace(keyOf(op), groups.size());
    if (fresh) groups.emplace_back(&op, 0);
    ++groups[it->second].second;
    groupOf.push_back(it->second);
  }
  std::vector<int> streamOfGroup(groups.size(), -1);  // reused groups only
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto& [first, count] = groups[g];
    if (count <= limits.streamCapacity || c.opsReused + count > limits.reuseLimit) continue;
    streamOfGroup[g] = c.numSubgraphs++;
    c.opsReused += count;
    c.reused.push_back(fmt::format("{}: {} ops", describe(*first), count));
  }
  c.streamOf.reserve(calls.size());
  int others = 0;
  for (size_t g : groupOf) {
    c.streamOf.push_back(streamOfGroup[g] >= 0 ? streamOfGroup[g]
                                               : c.numSubgraphs + others++ / limits.streamCapacity);
  }
  c.streamsWithoutReuse = ceilDiv(c.numOps, limits.streamCapacity);
  c.streamsUsed = c.numSubgraphs + ceilDiv(c.numOps - c.opsReused, limits.streamCapacity);
  return c;
}

}  // namespace weft
