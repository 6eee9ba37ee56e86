// --plan N[:BYTES]: N AllReduces of BYTES each (default 1 KiB) on N separately allocated buffer pairs,
// timed with the sweep's machinery (timeRounds: warm-up, rounds taken in turns in a balanced order,
// medians and min-max) in these forms:
//
//   plan         one weftPlanLaunch of a plan that recorded the N calls, issued as plain calls
//   eager        the same N calls issued directly
//   plan-group   one weftPlanLaunch of a plan that recorded the N calls inside weftGroupStart/End
//   eager-group  the same group issued directly (it fuses as the communicator's settings say)
//   peers        each --peer library making N calls on the same N buffers (MPI: N MPI_Allreduce)
//
// Each plan is recorded once per case, before the timing. Times are per launch (per N calls). The plan's
// weftPlanGetInfo and the weftCommGetStats deltas around one untimed launch of each form are kept. With
// -c 1, every form is checked once against the reference (fresh inputs, poisoned outputs; buffer i holds
// slice i of one input), and the plan's outputs are compared bit for bit with the eager calls' (plan with
// eager, plan-group with eager-group) on inputs with fractional values, where any difference in the order
// of the reduction would show.
//
// Also, once per run: the time to compile a plan of 10000 AllReduces (weftPlanBegin, the recording and
// weftPlanEnd), as plain calls and inside one group.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench.h"
#include "fusion_bench.h"
#include "options.h"
#include "peer.h"
#include "weft/weft.h"

namespace commperf {

// weftPlanGetInfo of one plan (the same on every rank: it depends only on the calls recorded).
struct PlanInfo {
  bool measured = false;
  int numOps = 0;
  int numSubgraphs = 0;
  int opsReused = 0;
  int streamsWithoutReuse = 0;
  int streamsUsed = 0;
  size_t resourceBytes = 0;  // the largest over the ranks
};

struct PlanRow {
  PlanCase planCase;  // as given (bytes before rounding down to whole elements)
  size_t count = 0;   // elements per call
  size_t bytes = 0;   // bytes per call: count * element size
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;
  Measure plan, eager, planGroup, eagerGroup;  // busbw from N * bytes, as one AllReduce of that size
  LaunchStats planStats, eagerStats, planGroupStats, eagerGroupStats;
  PlanInfo info, groupInfo;  // the plain plan's and the group plan's
  // Elements whose bits differ between the plan's outputs and the eager calls' (summed over ranks); -1
  // when not compared (-c 0).
  long long mismatches = -1, groupMismatches = -1;
  std::vector<Measure> peers;  // in --peer order: N calls of each peer

  size_t totalBytes() const { return bytes * static_cast<size_t>(planCase.calls); }
  double planOverEager() const { return FusionRow::ratio(plan, eager); }
  double eagerOverPlan() const { return FusionRow::ratio(eager, plan); }
  double planGroupOverEagerGroup() const { return FusionRow::ratio(planGroup, eagerGroup); }
  double peerOverPlan(size_t peer) const { return peer < peers.size() ? FusionRow::ratio(peers[peer], plan) : 0; }
  long long wrong() const;            // over every checked form
  long long totalMismatches() const;  // plain and group, 0 when not compared
};

// One compile measurement: weftPlanBegin, `ops` recorded AllReduces of `bytes` each, weftPlanEnd.
struct PlanCompileForm {
  bool ran = false;
  std::string error;  // weftPlanEnd's message when the plan could not be compiled (on any rank)
  double timeMs = 0, minMs = 0, maxMs = 0;  // median and min-max over the repetitions, max across ranks
  std::vector<double> repMs;
  PlanInfo info;
};

struct PlanCompile {
  bool measured = false;
  int ops = 0;
  size_t count = 0;  // elements per call
  size_t bytes = 0;  // per call
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;
  int repetitions = 0;
  // Set when commperf raised WEFT_SUBGRAPH_REUSE for the measurement (the environment did not set it): the
  // default limit (1000 reused calls) leaves 10000 identical calls needing more streams than
  // WEFT_MAX_STREAMS allows, and weftPlanEnd refuses such a plan.
  std::string reuseSetting;
  PlanCompileForm plain, group;
};

class PlanBench {
 public:
  // peers may be empty; they must outlive the PlanBench.
  PlanBench(weftComm_t comm, int rank, int nranks, const Options& options, const Peers& peers);
  PlanBench(const PlanBench&) = delete;
  PlanBench& operator=(const PlanBench&) = delete;

  PlanRow run(const PlanCase& planCase, weftDataType_t type, weftRedOp_t op);
  // The compile time of a plan of `ops` calls of `bytes` each, `repetitions` times. Collective.
  PlanCompile compile(int ops, size_t bytes, weftDataType_t type, weftRedOp_t op, int repetitions);

 private:
  PlanInfo infoOf(weftPlan_t plan);  // collective (resourceBytes: max over ranks)

  weftComm_t comm_;
  int rank_;
  int nranks_;
  const Options& options_;
  const Peers& peers_;
};

// Bytes one rank allocates for a case: N send and receive buffers plus the copy of the plan's outputs.
double planBytesPerRank(const PlanCase& planCase);

// The compile measurement's size.
constexpr int kPlanCompileOps = 10000;
constexpr size_t kPlanCompileBytes = 1024;
constexpr double kPlanCompileTargetMs = 100;  // the target
constexpr double kPlanOverEagerTarget = 0.5;  // the target, for 100 x 1 KiB at 2 ranks

}  // namespace commperf
