// Bad usage (every rejected call returns its error with a message and leaves the communicator working), empty
// plans, and the life cycle: many begin/end/launch/destroy cycles, several plans alive on one communicator.
#include <vector>

#include "plans_test.h"

namespace plantest {

namespace {

void checkEmptyInfo(Context& ctx, weftPlan_t plan) {
  weftPlanInfo_t info = WEFT_PLAN_INFO_INITIALIZER;
  expectResult(ctx, weftPlanGetInfo(plan, &info), weftSuccess, "weftPlanGetInfo(empty plan)");
  if (info.numOps != 0 || info.numSubgraphs != 0 || info.opsReused != 0 || info.streamsWithoutReuse != 0 ||
      info.streamsUsed != 0) {
    fail(ctx, "empty plan: weftPlanGetInfo says numOps " + std::to_string(info.numOps) + ", numSubgraphs " +
                  std::to_string(info.numSubgraphs) + ", opsReused " + std::to_string(info.opsReused) +
                  ", streamsWithoutReuse " + std::to_string(info.streamsWithoutReuse) + ", streamsUsed " +
                  std::to_string(info.streamsUsed) + "; expected all 0");
  }
}

}  // namespace

void caseBadUsage(Context& ctx) {
  weftComm_t comm = ctx.world.comm;
  weftPlan_t plan = nullptr;
  expectResult(ctx, weftPlanEnd(comm, &plan), weftInvalidUsage, "weftPlanEnd without weftPlanBegin");
  expectResult(ctx, weftPlanBegin(nullptr), weftInvalidArgument, "weftPlanBegin(NULL)");
  expectResult(ctx, weftPlanEnd(nullptr, &plan), weftInvalidArgument, "weftPlanEnd(NULL, &plan)");
  expectResult(ctx, weftPlanLaunch(nullptr, nullptr), weftInvalidArgument, "weftPlanLaunch(NULL, NULL)");
  expectResult(ctx, weftPlanLaunch(nullptr, ctx.stream), weftInvalidArgument, "weftPlanLaunch(NULL, stream)");
  weftPlanInfo_t info = WEFT_PLAN_INFO_INITIALIZER;
  expectResult(ctx, weftPlanGetInfo(nullptr, &info), weftInvalidArgument, "weftPlanGetInfo(NULL, &info)");
  expectResult(ctx, weftPlanDestroy(nullptr), weftInvalidArgument, "weftPlanDestroy(NULL)");

  // weftPlanBegin twice: the second is refused and the first recording goes on.
  Program prog(ctx, "weftPlanBegin twice", {makeOp(Kind::kAllReduce, weftFloat32, 100)});
  prog.fill();
  colltest::expectOk(weftPlanBegin(comm), "weftPlanBegin");
  expectResult(ctx, weftPlanBegin(comm), weftInvalidUsage, "weftPlanBegin while recording");
  prog.issue(Program::kPlanSet);
  colltest::expectOk(weftPlanEnd(comm, &plan), "weftPlanEnd after a refused second weftPlanBegin");
  info = WEFT_PLAN_INFO_INITIALIZER;
  colltest::expectOk(weftPlanGetInfo(plan, &info), "weftPlanGetInfo");
  ++ctx.report.calls;
  if (info.numOps != 1) fail(ctx, "weftPlanBegin twice: numOps " + std::to_string(info.numOps) + ", expected 1");

  // An info struct that is not one (wrong magic), or none.
  for (unsigned magic : {0u, WEFT_COMM_STATS_MAGIC, WEFT_PLAN_INFO_MAGIC + 1}) {
    weftPlanInfo_t bad = WEFT_PLAN_INFO_INITIALIZER;
    bad.magic = magic;
    expectResult(ctx, weftPlanGetInfo(plan, &bad), weftInvalidArgument,
                 "weftPlanGetInfo with magic " + std::to_string(magic));
  }
  expectResult(ctx, weftPlanGetInfo(plan, nullptr), weftInvalidArgument, "weftPlanGetInfo(plan, NULL)");
  // Launching while the communicator records.
  colltest::expectOk(weftPlanBegin(comm), "weftPlanBegin(launch while recording)");
  expectResult(ctx, weftPlanLaunch(plan, nullptr), weftInvalidUsage,
               "weftPlanLaunch while its communicator records");
  weftPlan_t empty = nullptr;
  colltest::expectOk(weftPlanEnd(comm, &empty), "weftPlanEnd(launch while recording)");
  colltest::expectOk(weftPlanDestroy(empty), "weftPlanDestroy(launch while recording)");
  // The plan still works after the rejected calls.
  colltest::expectOk(weftPlanLaunch(plan, nullptr), "weftPlanLaunch after rejected calls");
  prog.verify(Program::kPlanSet, "launch after rejected calls");
  colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy");
  expectResult(ctx, weftPlanEnd(comm, &plan), weftInvalidUsage, "weftPlanEnd after the recording ended");

  // An empty plan compiles, launches (NULL stream and a created one) and runs nothing.
  colltest::expectOk(weftPlanBegin(comm), "weftPlanBegin(empty)");
  plan = nullptr;
  colltest::expectOk(weftPlanEnd(comm, &plan), "weftPlanEnd(empty)");
  if (plan == nullptr) colltest::fatal("weftPlanEnd of an empty plan returned success and a NULL plan");
  checkEmptyInfo(ctx, plan);
  const unsigned long long before = launched(comm);
  for (int i = 0; i < 3; ++i) {
    colltest::expectOk(weftPlanLaunch(plan, nullptr), "weftPlanLaunch(empty, NULL)");
    colltest::expectOk(weftPlanLaunch(plan, ctx.stream), "weftPlanLaunch(empty, stream)");
  }
  colltest::expectOk(weftStreamSynchronize(ctx.stream), "weftStreamSynchronize(empty plan)");
  ++ctx.report.calls;
  if (launched(comm) != before) fail(ctx, "launching an empty plan changed collectivesLaunched");
  colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy(empty)");

  // The communicator works after all that.
  runProgram(ctx, "a plan after the bad usage", {makeOp(Kind::kAllReduce, weftInt32, 1000)}, RunOptions{2, {}});
}

void caseLifecycle(Context& ctx) {
  // 20 cycles of begin, record, end, launch (1 or 2 times), destroy.
  for (int cycle = 0; cycle < 20; ++cycle) {
    const std::vector<Op> ops = {
        makeOp(Kind::kAllReduce, weftFloat32, 100 + cycle),
        makeOp(Kind::kAllGather, weftInt64, 10),
        makeOp(Kind::kReduceScatter, weftInt32, 20, 0),
        makeOp(Kind::kAllReduce, weftFloat32, 7, 0),
    };
    runProgram(ctx, "cycle " + std::to_string(cycle + 1), ops, RunOptions{1 + cycle % 2, {}});
  }
  // A plan destroyed without being launched.
  float send[8] = {}, recv[8] = {};
  colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin(never launched)");
  colltest::expectOk(weftAllReduce(send, recv, 8, weftFloat32, weftSum, ctx.world.comm, nullptr), "record");
  weftPlan_t unused = nullptr;
  colltest::expectOk(weftPlanEnd(ctx.world.comm, &unused), "weftPlanEnd(never launched)");
  colltest::expectOk(weftPlanDestroy(unused), "weftPlanDestroy(never launched)");

  // Two plans alive on one communicator, launched in turn, one destroyed while the other goes on.
  Program a(ctx, "plan A", {makeOp(Kind::kAllReduce, weftInt32, 300), makeOp(Kind::kAllGather, weftFloat32, 30)});
  Program b(ctx, "plan B",
            {makeOp(Kind::kReduceScatter, weftFloat64, 40, 0), makeOp(Kind::kSendRecv, weftInt8, 50, 0)});
  weftPlan_t plans[2] = {nullptr, nullptr};
  Program* progs[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    progs[k]->fill();
    colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin: " + progs[k]->what());
    progs[k]->issue(Program::kPlanSet);
    colltest::expectOk(weftPlanEnd(ctx.world.comm, &plans[k]), "weftPlanEnd: " + progs[k]->what());
  }
  for (int k : {1, 0, 1, 1, 0}) {
    progs[k]->fill();
    colltest::expectOk(weftPlanLaunch(plans[k], nullptr), "weftPlanLaunch: " + progs[k]->what());
    progs[k]->verify(Program::kPlanSet, "launched in turn");
  }
  colltest::expectOk(weftPlanDestroy(plans[0]), "weftPlanDestroy: plan A");
  for (int i = 0; i < 2; ++i) {
    b.fill();
    colltest::expectOk(weftPlanLaunch(plans[1], i ? ctx.stream : nullptr), "weftPlanLaunch: plan B");
    if (i) colltest::expectOk(weftStreamSynchronize(ctx.stream), "weftStreamSynchronize: plan B");
    b.verify(Program::kPlanSet, "after plan A was destroyed");
  }
  colltest::expectOk(weftPlanDestroy(plans[1]), "weftPlanDestroy: plan B");

  // A plan outliving its communicator: its launches fail with a clear error, destroying it still works.
  weftComm_t doomed = nullptr;
  colltest::expectOk(weftCommSplit(ctx.world.comm, 0, 0, &doomed), "weftCommSplit (doomed)");
  std::vector<float> data(16, 1.0f);
  weftPlan_t orphan = nullptr;
  colltest::expectOk(weftPlanBegin(doomed), "weftPlanBegin (doomed)");
  colltest::expectOk(weftAllReduce(data.data(), data.data(), data.size(), weftFloat32, weftSum, doomed, nullptr),
                     "weftAllReduce (recorded on doomed)");
  colltest::expectOk(weftPlanEnd(doomed, &orphan), "weftPlanEnd (doomed)");
  colltest::expectOk(weftCommDestroy(doomed), "weftCommDestroy (doomed)");
  expectResult(ctx, weftPlanLaunch(orphan, nullptr), weftInvalidUsage, "weftPlanLaunch after weftCommDestroy");
  colltest::expectOk(weftPlanDestroy(orphan), "weftPlanDestroy (orphan)");
  if (data[0] != 1.0f) fail(ctx, "a plan launched after its communicator was destroyed wrote its buffer");
}

}  // namespace plantest
