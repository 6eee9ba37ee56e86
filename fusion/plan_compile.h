// Compiling a plan's classification: which recorded calls share a compiled subgraph, and how many streams
// the plan needs (MindSpore's communication subgraph reuse, MS_COMM_COMPILER_OPT).
//
// Calls are classified by key (collective, count, datatype, op, root, communicator, fusion id). Keys are
// visited in order of first appearance; a key's whole group of calls is served by one reused subgraph if
// it has more calls than one stream carries and the running total of reused calls stays within the
// limit (greedy: a group that would pass it is skipped whole; a later, smaller one may still fit).
// Streams: ceil(calls / capacity) without reuse; with it, one per reused subgraph plus ceil(other calls /
// capacity).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/collectives/op.h"

namespace weft {

struct PlanLimits {
  int streamCapacity = 3;  // WEFT_STREAM_CAPACITY: compiled operations one stream carries
  int maxStreams = 64;     // WEFT_MAX_STREAMS
  int reuseLimit = 1000;   // WEFT_SUBGRAPH_REUSE: unset or -1 -> 1000, N > 0 -> N, 0 -> off
};

// Reads the three settings; throws weftInvalidArgument naming a bad one.
PlanLimits planLimitsFromEnvironment();

struct PlanClassification {
  int numOps = 0;
  int numSubgraphs = 0;
  int opsReused = 0;
  int streamsWithoutReuse = 0;
  int streamsUsed = 0;
  std::vector<std::string> reused;  // "allreduce count 1024 float32 sum ... : 30 ops", for the log
  // Per call, the stream it runs on: reused subgraphs take streams 0 .. numSubgraphs - 1 (in order of their
  // key's first call), the other calls fill the next streams `capacity` at a time, in order.
  std::vector<int> streamOf;
};

PlanClassification classifyPlan(std::span<const Op> calls, const PlanLimits& limits);

}  // namespace weft
