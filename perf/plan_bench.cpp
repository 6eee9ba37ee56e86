#include "plan_bench.h"

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "check.h"
#include "colls.h"
#include "stats.h"
#include "types.h"

namespace commperf {

namespace {

// Owns one weftPlan_t.
class PlanHandle {
 public:
  PlanHandle() = default;
  ~PlanHandle() { reset(); }
  PlanHandle(const PlanHandle&) = delete;
  PlanHandle& operator=(const PlanHandle&) = delete;
  weftPlan_t get() const { return plan_; }
  weftPlan_t* out() {
    reset();
    return &plan_;
  }
  void reset() {
    if (plan_) weftPlanDestroy(plan_);  // a failure here changes nothing that is measured
    plan_ = nullptr;
  }

 private:
  weftPlan_t plan_ = nullptr;
};

uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Inputs for the plan-versus-eager comparison: for floating types fractions that are not exactly
// representable and whose sums round (in [-1, 1]; in [0.5, 1.5] for prod, which neither overflows nor
// underflows), so that a different order of reduction would change bits; for integers any bit pattern.
void fillRough(weftDataType_t type, weftRedOp_t op, void* buffer, size_t count, size_t first, int rank) {
  size_t size = typeSize(type);
  unsigned char* out = static_cast<unsigned char*>(buffer);
  for (size_t i = 0; i < count; ++i) {
    uint64_t h = mix(mix(static_cast<uint64_t>(rank) + 0x7a11ull) ^ static_cast<uint64_t>(first + i));
    double unit = static_cast<double>(h % 1000003) / 1000003.0;  // [0, 1)
    double v = op == weftProd ? 0.5 + unit : 2.0 * unit - 1.0;
    unsigned char* at = out + i * size;
    switch (type) {
      case weftFloat32: {
        float f = static_cast<float>(v);
        std::memcpy(at, &f, sizeof f);
        break;
      }
      case weftFloat64:
        std::memcpy(at, &v, sizeof v);
        break;
      case weftFloat16: {
        uint16_t bits = floatToHalfBits(static_cast<float>(v));
        std::memcpy(at, &bits, sizeof bits);
        break;
      }
      case weftBfloat16: {
        uint16_t bits = floatToBfloat16Bits(static_cast<float>(v));
        std::memcpy(at, &bits, sizeof bits);
        break;
      }
      default:
        std::memcpy(at, &h, size);  // the low bytes on a little-endian machine; any pattern will do
        break;
    }
  }
}

// [numOps, numSubgraphs, opsReused, streamsWithoutReuse, streamsUsed, resourceBytes] max over the ranks.
PlanInfo maxOverRanks(const weftPlanInfo_t& info) {
  long long local[6] = {info.numOps,      info.numSubgraphs,
                        info.opsReused,   info.streamsWithoutReuse,
                        info.streamsUsed, static_cast<long long>(info.resourceBytes)};
  long long global[6] = {};
  MPI_Allreduce(local, global, 6, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  PlanInfo p;
  p.measured = true;
  p.numOps = static_cast<int>(global[0]);
  p.numSubgraphs = static_cast<int>(global[1]);
  p.opsReused = static_cast<int>(global[2]);
  p.streamsWithoutReuse = static_cast<int>(global[3]);
  p.streamsUsed = static_cast<int>(global[4]);
  p.resourceBytes = static_cast<size_t>(global[5]);
  return p;
}

}  // namespace

long long PlanRow::wrong() const {
  long long total = 0;
  for (const Measure* m : {&plan, &eager, &planGroup, &eagerGroup})
    if (m->ran && m->wrong > 0) total += m->wrong;
  for (const Measure& m : peers)
    if (m.ran && m.wrong > 0) total += m.wrong;
  return total;
}

long long PlanRow::totalMismatches() const {
  return (mismatches > 0 ? mismatches : 0) + (groupMismatches > 0 ? groupMismatches : 0);
}

double planBytesPerRank(const PlanCase& planCase) {
  return 3.0 * planCase.calls * static_cast<double>(planCase.bytes);
}

PlanBench::PlanBench(weftComm_t comm, int rank, int nranks, const Options& options, const Peers& peers)
    : comm_(comm), rank_(rank), nranks_(nranks), options_(options), peers_(peers) {}

PlanInfo PlanBench::infoOf(weftPlan_t plan) {
  weftPlanInfo_t info = WEFT_PLAN_INFO_INITIALIZER;
  weftCheck(weftPlanGetInfo(plan, &info), "weftPlanGetInfo", rank_);
  return maxOverRanks(info);
}

PlanRow PlanBench::run(const PlanCase& planCase, weftDataType_t type, weftRedOp_t op) {
  const CollDesc& desc = *findColl("allreduce");
  size_t elemSize = typeSize(type);
  int calls = planCase.calls;
  PlanRow row;
  row.planCase = planCase;
  row.count = planCase.bytes / elemSize;
  row.bytes = row.count * elemSize;
  row.type = type;
  row.op = op;
  size_t count = row.count;

  FusionBuffers buffers(calls, row.bytes, row.bytes, false);
  CheckContext ctx{&desc, type, op, rank_, nranks_, options_.root, desc.counts(count, rank_, nranks_)};
  // Buffer i holds elements [i * count, (i + 1) * count) of one input.
  auto fillInputs = [&] {
    for (int i = 0; i < calls; ++i) fillInput(ctx, buffers.send[i], count, static_cast<size_t>(i) * count);
  };
  auto poisonOutputs = [&] {
    for (int i = 0; i < calls; ++i) poisonOutput(ctx, buffers.recv[i], count);
  };
  auto countWrongOutputs = [&] {
    long long wrong = 0;
    for (int i = 0; i < calls; ++i)
      wrong += static_cast<long long>(countWrong(ctx, buffers.recv[i], static_cast<size_t>(i) * count));
    return sumOverRanks(wrong);
  };

  std::vector<CallArgs> args;
  args.reserve(static_cast<size_t>(calls));
  for (int i = 0; i < calls; ++i)
    args.push_back(
        CallArgs{buffers.send[i], buffers.recv[i], count, type, op, options_.root, rank_, nranks_, comm_});

  Side eager = [&] {
    for (const CallArgs& a : args) weftCheck(desc.call(a), "weftAllReduce", rank_);
  };
  Side eagerGroup = [&] {
    weftCheck(weftGroupStart(), "weftGroupStart", rank_);
    for (const CallArgs& a : args) weftCheck(desc.call(a), "weftAllReduce (in a group)", rank_);
    weftCheck(weftGroupEnd(), "weftGroupEnd", rank_);
  };
  // Recorded once, outside the timing: the same calls, between weftPlanBegin and weftPlanEnd.
  auto record = [&](const Side& calls, PlanHandle& plan) {
    weftCheck(weftPlanBegin(comm_), "weftPlanBegin", rank_);
    calls();
    weftResult_t result = weftPlanEnd(comm_, plan.out());
    if (result == weftInvalidUsage && rank_ == 0) {
      // The stream limit: N identical calls share one reused subgraph only while N stays within
      // WEFT_SUBGRAPH_REUSE's limit (1000 by default); otherwise they need ceil(N / WEFT_STREAM_CAPACITY).
      std::fprintf(stderr,
                   "commperf: --plan %d:%zu: weftPlanEnd refused the plan; WEFT_SUBGRAPH_REUSE=%d (or more) lets "
                   "one reused subgraph take all %d identical calls\n",
                   planCase.calls, planCase.bytes, planCase.calls, planCase.calls);
    }
    weftCheck(result, "weftPlanEnd", rank_);
  };
  PlanHandle plan, groupPlan;
  record(eager, plan);
  record(eagerGroup, groupPlan);
  row.info = infoOf(plan.get());
  row.groupInfo = infoOf(groupPlan.get());
  auto launcher = [this](weftPlan_t p) -> Side {
    return [this, p] { weftCheck(weftPlanLaunch(p, nullptr), "weftPlanLaunch", rank_); };
  };
  Side planLaunch = launcher(plan.get()), planGroupLaunch = launcher(groupPlan.get());
  fillInputs();

  // Sides 0-3 are Weft's forms; each peer that can run this shape on N buffer sets adds one.
  std::vector<Side> sides{planLaunch, eager, planGroupLaunch, eagerGroup};
  const PeerSides peerSides(sides, row.peers, peers_, desc, type, op, args, rank_);

  auto times = timeRounds(sides, options_);
  double bytes = static_cast<double>(row.totalBytes());
  double busFactor = desc.busFactor(nranks_);
  fillMeasure(row.plan, times[0], bytes, busFactor);
  fillMeasure(row.eager, times[1], bytes, busFactor);
  fillMeasure(row.planGroup, times[2], bytes, busFactor);
  fillMeasure(row.eagerGroup, times[3], bytes, busFactor);
  peerSides.fill(times, bytes, busFactor);

  // One more launch of each form, untimed: the statistics' deltas around it and, with -c 1, its results
  // from fresh inputs into poisoned outputs (the plans read the inputs written after they were recorded).
  auto probe = [&](const Side& side, Measure& m, LaunchStats& s) {
    if (options_.check) {
      fillInputs();
      poisonOutputs();
    }
    s = launchStatsOf(comm_, rank_, side);
    if (options_.check) m.wrong = countWrongOutputs();
  };
  probe(planLaunch, row.plan, row.planStats);
  probe(eager, row.eager, row.eagerStats);
  probe(planGroupLaunch, row.planGroup, row.planGroupStats);
  probe(eagerGroup, row.eagerGroup, row.eagerGroupStats);
  if (!options_.check) return row;
  peerSides.check(
      peers_, desc, args, rank_, options_.root,
      [&] {
        fillInputs();
        poisonOutputs();
      },
      countWrongOutputs);

  // Bit for bit: the plan's outputs against the eager calls', on inputs whose reduction rounds.
  std::vector<unsigned char> planOut(row.totalBytes());
  auto mismatchesOf = [&](const Side& planSide, const Side& eagerSide) {
    auto runOnRough = [&](const Side& side) {
      for (int i = 0; i < calls; ++i)
        fillRough(type, op, buffers.send[i], count, static_cast<size_t>(i) * count, rank_);
      poisonOutputs();
      side();
    };
    runOnRough(planSide);
    for (int i = 0; i < calls; ++i) std::memcpy(planOut.data() + i * row.bytes, buffers.recv[i], row.bytes);
    runOnRough(eagerSide);
    long long differ = 0;
    for (int i = 0; i < calls; ++i)
      for (size_t j = 0; j < count; ++j)
        differ += std::memcmp(planOut.data() + i * row.bytes + j * elemSize, buffers.recv[i] + j * elemSize,
                              elemSize) != 0;
    return sumOverRanks(differ);
  };
  row.mismatches = mismatchesOf(planLaunch, eager);
  row.groupMismatches = mismatchesOf(planGroupLaunch, eagerGroup);
  return row;
}

PlanCompile PlanBench::compile(int ops, size_t bytes, weftDataType_t type, weftRedOp_t op, int repetitions) {
  const CollDesc& desc = *findColl("allreduce");
  PlanCompile pc;
  pc.measured = true;
  pc.ops = ops;
  pc.count = bytes / typeSize(type);
  pc.bytes = pc.count * typeSize(type);
  pc.type = type;
  pc.op = op;
  pc.repetitions = repetitions;

  // weftPlanEnd reads WEFT_SUBGRAPH_REUSE each time. Unless the environment says otherwise, let the reused
  // subgraph take all `ops` identical calls: with the default limit (1000) the other 9000 need 3000 streams,
  // more than WEFT_MAX_STREAMS, and the plan is refused. Set while Weft's threads are idle (no call is in
  // flight) and put back afterwards.
  const char* given = std::getenv("WEFT_SUBGRAPH_REUSE");
  bool setReuse = given == nullptr || *given == '\0';
  std::optional<std::string> before;
  if (given) before = given;
  if (setReuse) {
    pc.reuseSetting = std::to_string(ops);
    setenv("WEFT_SUBGRAPH_REUSE", pc.reuseSetting.c_str(), 1);
  }

  FusionBuffers buffers(ops, pc.bytes, pc.bytes, false);
  std::vector<CallArgs> args;
  args.reserve(static_cast<size_t>(ops));
  for (int i = 0; i < ops; ++i)
    args.push_back(
        CallArgs{buffers.send[i], buffers.recv[i], pc.count, type, op, options_.root, rank_, nranks_, comm_});

  auto measure = [&](bool inGroup, PlanCompileForm& form) {
    std::vector<double> local(static_cast<size_t>(repetitions), 0.0);
    std::string error;
    int done = 0;
    for (; done < repetitions; ++done) {
      PlanHandle plan;
      MPI_Barrier(MPI_COMM_WORLD);
      auto start = std::chrono::steady_clock::now();
      weftResult_t result = weftPlanBegin(comm_);
      if (result == weftSuccess) {
        if (inGroup) weftCheck(weftGroupStart(), "weftGroupStart", rank_);
        for (const CallArgs& a : args) weftCheck(desc.call(a), "weftAllReduce (recorded)", rank_);
        if (inGroup) weftCheck(weftGroupEnd(), "weftGroupEnd", rank_);
        result = weftPlanEnd(comm_, plan.out());
      }
      auto stop = std::chrono::steady_clock::now();
      local[static_cast<size_t>(done)] = std::chrono::duration<double, std::milli>(stop - start).count();
      if (result != weftSuccess) {
        const char* message = weftGetLastErrorMessage();
        error = std::string(weftGetErrorString(result)) + ": " + (message && *message ? message : "(no message)");
      }
      int failed = result != weftSuccess, anyFailed = 0;
      MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (anyFailed) {
        // Rank 0 reports; its own message, or that another rank failed.
        form.error = failed ? error : "weftPlanEnd failed on another rank";
        break;
      }
      if (done == 0) form.info = infoOf(plan.get());
    }
    std::vector<double> global(local.size(), 0.0);
    MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    if (!form.error.empty()) return;
    form.ran = true;
    form.repMs = global;
    Spread spread = summarize(form.repMs);
    form.timeMs = spread.median;
    form.minMs = spread.min;
    form.maxMs = spread.max;
  };
  measure(false, pc.plain);
  measure(true, pc.group);
  if (setReuse) {
    if (before)
      setenv("WEFT_SUBGRAPH_REUSE", before->c_str(), 1);
    else
      unsetenv("WEFT_SUBGRAPH_REUSE");
  }
  return pc;
}

}  // namespace commperf
