// A launch allocates nothing (docs/plans.md): once a plan has run, launching it again on the NULL stream makes
// no allocation anywhere in the process (operator new counted program-wide, libweft and plugins included),
// for every collective, a fused group, a run of independent AllReduces and Send/Recv; each launch is still
// checked against the reference.
#include <string>
#include <vector>

#include "alloc_count.h"
#include "plans_test.h"

namespace plantest {

namespace {

Op op(Kind kind, weftDataType_t type, size_t count, int group = -1) {
  Op o;
  o.kind = kind;
  o.type = type;
  o.count = count;
  o.group = group;
  return o;
}

}  // namespace

void caseLaunchAllocations(Context& ctx) {
  constexpr int kWarmLaunches = 2;  // the first launch sets up what the communicator keeps (e.g. its backend)
  constexpr int kCountedLaunches = 3;
  const std::vector<Op> ops = {
      op(Kind::kAllReduce, weftFloat32, 256),     op(Kind::kAllReduce, weftFloat32, 1000),
      op(Kind::kAllReduce, weftFloat32, 70000),   op(Kind::kAllGather, weftInt32, 300),
      op(Kind::kReduceScatter, weftFloat64, 200), op(Kind::kBroadcast, weftInt64, 5000),
      op(Kind::kReduce, weftFloat32, 4000),       op(Kind::kAllToAll, weftInt32, 64),
      op(Kind::kAllReduce, weftFloat32, 100, 0),  op(Kind::kAllReduce, weftFloat32, 300, 0),
      op(Kind::kAllGather, weftFloat32, 50, 0),   op(Kind::kBarrier, weftFloat32, 0),
      op(Kind::kSendRecv, weftInt8, 1000),        op(Kind::kAllReduce, weftInt32, 2 << 20),
  };
  Program prog(ctx, "launch allocations", ops);
  prog.fill();
  colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin: " + prog.what());
  prog.issue(Program::kPlanSet);
  weftPlan_t plan = nullptr;
  colltest::expectOk(weftPlanEnd(ctx.world.comm, &plan), "weftPlanEnd: " + prog.what());
  for (int launch = 0; launch < kWarmLaunches + kCountedLaunches; ++launch) {
    const std::string when = "launch " + std::to_string(launch + 1);
    prog.fill();
    const std::string call = "weftPlanLaunch: " + when;  // made before counting starts
    uint64_t allocations = 0;
    weftResult_t result = weftSuccess;
    {
      CountAllocations counting;
      result = weftPlanLaunch(plan, nullptr);
      allocations = counting.count();
    }
    colltest::expectOk(result, call);
    ++ctx.report.calls;
    prog.verify(Program::kPlanSet, when);
    if (launch >= kWarmLaunches && allocations != 0) {
      fail(ctx, when + " (NULL stream) allocated " + std::to_string(allocations) +
                    " times with operator new; a launch after the first must allocate nothing");
    }
  }
  colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy: " + prog.what());
}

}  // namespace plantest
