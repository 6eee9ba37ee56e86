// Programs of every collective, in groups and outside, with Ex fusion ids and dependencies between calls;
// a split communicator; recorded groups that fuse. runProgram checks each launch against the reference and
// against the same calls issued eagerly.
#include <cstring>

#include "plans_test.h"

namespace plantest {

namespace {

Op reducing(Kind kind, weftDataType_t type, weftRedOp_t red, size_t count, int group = -1) {
  Op op = makeOp(kind, type, count, group);
  op.op = red;
  return op;
}

template <typename F>
Op with(Op op, F f) {
  f(op);
  return op;
}

// An AllReduce issued eagerly on comm (rank r contributes r + 1 + e % 5), checked at once: calls on a
// communicator that is not recording (or no longer is) run when issued.
void eagerAllReduce(Context& ctx, const colltest::CommView& v, const std::string& what) {
  constexpr size_t kCount = 100;
  std::vector<int32_t> send(kCount), recv(kCount, -7);
  for (size_t e = 0; e < kCount; ++e) send[e] = v.rank + 1 + static_cast<int32_t>(e % 5);
  colltest::expectOk(weftAllReduce(send.data(), recv.data(), kCount, weftInt32, weftSum, v.comm, nullptr),
                     "weftAllReduce: " + what);
  ++ctx.report.calls;
  ctx.report.elements += kCount;
  for (size_t e = 0; e < kCount; ++e) {
    const int32_t want = v.size * (v.size + 1) / 2 + v.size * static_cast<int32_t>(e % 5);
    if (recv[e] == want) continue;
    fail(ctx, what + ": eager AllReduce on " + v.name + ", element " + std::to_string(e) + ": got " +
                  std::to_string(recv[e]) + ", expected " + std::to_string(want) +
                  (recv[e] == -7 ? " (the call did not run)" : ""));
    return;
  }
}

}  // namespace

void caseRecording(Context& ctx) {
  // One of each, nothing else: every output poisoned during recording, 4 launches.
  const std::vector<Op> each = {
      reducing(Kind::kAllReduce, weftFloat32, weftSum, 1000),
      makeOp(Kind::kAllGather, weftInt32, 100),
      reducing(Kind::kReduceScatter, weftInt64, weftMax, 50),
      with(makeOp(Kind::kBroadcast, weftUint8, 333), [](Op& o) { o.root = -1; }),
      with(reducing(Kind::kReduce, weftFloat64, weftSum, 200), [](Op& o) { o.root = 1; }),
      makeOp(Kind::kAllToAll, weftInt32, 40),
      makeOp(Kind::kBarrier, weftInt8, 0),
      makeOp(Kind::kSendRecv, weftFloat32, 500, 0),
  };
  runProgram(ctx, "one of each", each, RunOptions{4, {}});

  // Recording is per communicator: while world records, a call on the sub-communicator runs when issued,
  // and once weftPlanEnd returns, calls on world run when issued again.
  Program prog(ctx, "recording world only", {reducing(Kind::kAllReduce, weftInt32, weftSum, 64)});
  prog.fill();
  const uint64_t hash = prog.hash(Program::kPlanSet);
  colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin(world)");
  prog.issue(Program::kPlanSet);
  eagerAllReduce(ctx, ctx.sub, "sub-communicator while world records");
  weftPlan_t plan = nullptr;
  colltest::expectOk(weftPlanEnd(ctx.world.comm, &plan), "weftPlanEnd(world)");
  ++ctx.report.calls;
  if (prog.hash(Program::kPlanSet) != hash) fail(ctx, "recording world only: the recorded call ran");
  eagerAllReduce(ctx, ctx.world, "world after weftPlanEnd");
  colltest::expectOk(weftPlanLaunch(plan, nullptr), "weftPlanLaunch(recording world only)");
  prog.verify(Program::kPlanSet, "launch 1 on NULL");
  colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy");
  eagerAllReduce(ctx, ctx.world, "world after weftPlanDestroy");

  // A call the checks reject while recording is not recorded; a launch's Send/Recv are one batch, so an
  // ungrouped Send then Recv (which would wait for each other if issued eagerly) runs; a plan destroyed
  // right after its launch was queued on a stream still runs.
  const std::vector<Op> ring = {makeOp(Kind::kSendRecv, weftInt64, 1000),
                                reducing(Kind::kAllReduce, weftInt8, weftMax, 99)};
  Program batch(ctx, "ungrouped Send/Recv", ring);
  batch.fill();
  colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin(ungrouped Send/Recv)");
  float x[4] = {};
  expectResult(ctx, weftBroadcast(x, x, 4, weftFloat32, ctx.world.size + 3, ctx.world.comm, nullptr),
               weftInvalidArgument, "weftBroadcast with root nranks + 3 while recording");
  batch.issue(Program::kPlanSet);
  colltest::expectOk(weftPlanEnd(ctx.world.comm, &plan), "weftPlanEnd(ungrouped Send/Recv)");
  weftPlanInfo_t info = WEFT_PLAN_INFO_INITIALIZER;
  colltest::expectOk(weftPlanGetInfo(plan, &info), "weftPlanGetInfo(ungrouped Send/Recv)");
  ++ctx.report.calls;
  if (info.numOps < 2 || info.numOps > 3) {
    fail(ctx, "ungrouped Send/Recv: numOps " + std::to_string(info.numOps) +
                  " for a Send, a Recv and an AllReduce (the rejected call recorded?)");
  }
  for (int launch = 0; launch < 3; ++launch) {
    batch.fill();
    colltest::expectOk(weftPlanLaunch(plan, launch % 2 ? ctx.stream : nullptr), "weftPlanLaunch(Send/Recv)");
    if (launch == 2) colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy(right after a launch on NULL)");
    if (launch % 2) colltest::expectOk(weftStreamSynchronize(ctx.stream), "weftStreamSynchronize");
    batch.verify(Program::kPlanSet, "launch " + std::to_string(launch + 1));
  }
  Program queued(ctx, "destroyed while queued", each);
  queued.fill();
  colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin(destroyed while queued)");
  queued.issue(Program::kPlanSet);
  colltest::expectOk(weftPlanEnd(ctx.world.comm, &plan), "weftPlanEnd(destroyed while queued)");
  queued.fill();
  colltest::expectOk(weftPlanLaunch(plan, ctx.stream), "weftPlanLaunch(destroyed while queued)");
  colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy(with its launch queued on a stream)");
  colltest::expectOk(weftStreamSynchronize(ctx.stream), "weftStreamSynchronize(destroyed while queued)");
  queued.verify(Program::kPlanSet, "launch queued, plan destroyed");
}

void caseMixed(Context& ctx) {
  std::vector<Op> ops;
  ops.push_back(reducing(Kind::kAllReduce, weftFloat32, weftSum, 1000));
  ops.push_back(with(makeOp(Kind::kAllGather, weftInt32, 77), [](Op& o) { o.inPlace = true; }));
  ops.push_back(reducing(Kind::kAllReduce, weftInt64, weftSum, 0));  // count 0
  // A group of everything, with Ex fusion ids 0 and 2 (and 1: the plain calls' id).
  ops.push_back(reducing(Kind::kReduceScatter, weftFloat64, weftMax, 33, 1));
  ops.push_back(
      with(makeOp(Kind::kBroadcast, weftBfloat16, 100, 1), [](Op& o) { o.root = -1, o.inPlace = true; }));
  ops.push_back(with(reducing(Kind::kReduce, weftInt64, weftProd, 50, 1), [](Op& o) { o.root = 0; }));
  ops.push_back(makeOp(Kind::kSendRecv, weftUint8, 300, 1));
  for (int id : {0, 2, 2, 1}) {
    ops.push_back(with(reducing(Kind::kAllReduce, weftFloat16, weftAvg, 64, 1), [&](Op& o) { o.fusionId = id; }));
  }
  ops.push_back(with(reducing(Kind::kAllReduce, weftFloat16, weftAvg, 64, 1), [](Op& o) { o.inPlace = true; }));
  ops.push_back(makeOp(Kind::kAllToAll, weftInt8, 40, 1));
  ops.push_back(makeOp(Kind::kBarrier, weftInt8, 0));
  // A chain outside groups: each call reads the previous one's output.
  const int chain = static_cast<int>(ops.size());
  ops.push_back(reducing(Kind::kAllReduce, weftInt32, weftSum, 500));
  ops.push_back(with(reducing(Kind::kAllReduce, weftInt32, weftMax, 500), [&](Op& o) { o.inputOf = chain; }));
  ops.push_back(with(makeOp(Kind::kBroadcast, weftInt32, 500), [&](Op& o) { o.inputOf = chain + 1, o.root = 1; }));
  ops.push_back(with(makeOp(Kind::kAllGather, weftInt32, 500), [&](Op& o) { o.inputOf = chain + 2; }));
  // The same inside one group (the calls must not fuse across the dependency).
  const int grouped = static_cast<int>(ops.size());
  ops.push_back(reducing(Kind::kAllReduce, weftFloat32, weftSum, 300, 2));
  ops.push_back(
      with(reducing(Kind::kAllReduce, weftFloat32, weftSum, 300, 2), [&](Op& o) { o.inputOf = grouped; }));
  ops.push_back(reducing(Kind::kAllReduce, weftFloat32, weftSum, 300, 2));
  // Ex ids on AllGather and ReduceScatter in a group; then a larger AllReduce and an in-place Reduce.
  for (int i = 0; i < 3; ++i) {
    ops.push_back(with(makeOp(Kind::kAllGather, weftFloat32, 50 + i, 3), [&](Op& o) { o.fusionId = 3; }));
    ops.push_back(with(reducing(Kind::kReduceScatter, weftUint32, weftMin, 20, 3), [&](Op& o) {
      o.fusionId = i == 1 ? 0 : 3;
      o.inPlace = i == 2;
    }));
  }
  ops.push_back(reducing(Kind::kAllReduce, weftFloat32, weftSum, 1 << 17));
  ops.push_back(
      with(reducing(Kind::kReduce, weftFloat32, weftMin, 1000), [](Op& o) { o.root = -1, o.inPlace = true; }));
  ops.push_back(with(reducing(Kind::kReduceScatter, weftBfloat16, weftSum, 128), [](Op& o) { o.inPlace = true; }));
  runProgram(ctx, "mixed program (" + std::to_string(ops.size()) + " ops)", ops);

  // Every type with its reductions, one group per type.
  std::vector<Op> types;
  int group = 10;
  for (weftDataType_t t : colltest::kAllTypes) {
    for (weftRedOp_t red : colltest::kAllOps) types.push_back(reducing(Kind::kAllReduce, t, red, 129, group));
    types.push_back(makeOp(Kind::kAllGather, t, 31, group));
    types.push_back(reducing(Kind::kReduceScatter, t, weftSum, 17));
    ++group;
  }
  runProgram(ctx, "every type and op (" + std::to_string(types.size()) + " ops)", types);
}

void caseSplit(Context& ctx) {
  // Both communicators recording at once, calls interleaved; groups on one communicator each.
  std::vector<Op> ops;
  for (int i = 0; i < 6; ++i) {
    ops.push_back(with(reducing(Kind::kAllReduce, weftFloat32, weftSum, 200 + i), [&](Op& o) { o.comm = i % 2; }));
    ops.push_back(with(makeOp(Kind::kAllGather, weftInt64, 10 + i), [&](Op& o) { o.comm = (i + 1) % 2; }));
  }
  for (int i = 0; i < 4; ++i) {
    ops.push_back(with(reducing(Kind::kAllReduce, weftInt32, weftSum, 100, 20), [](Op& o) { o.comm = 1; }));
  }
  ops.push_back(with(makeOp(Kind::kSendRecv, weftFloat64, 64, 21), [](Op& o) { o.comm = 1; }));
  ops.push_back(with(makeOp(Kind::kBroadcast, weftInt32, 99, 21), [](Op& o) { o.comm = 1, o.root = -1; }));
  ops.push_back(with(reducing(Kind::kReduce, weftFloat32, weftMax, 99), [](Op& o) { o.comm = 1, o.root = 1; }));
  ops.push_back(makeOp(Kind::kSendRecv, weftFloat64, 64, 22));
  ops.push_back(with(makeOp(Kind::kAllToAll, weftInt32, 9), [](Op& o) { o.comm = 1; }));
  runProgram(ctx, "world and sub recording together", ops);

  // The sub-communicator alone.
  std::vector<Op> subOnly;
  for (Op op : ops) {
    if (op.comm == 0) continue;
    subOnly.push_back(op);
  }
  runProgram(ctx, "sub-communicator alone", subOnly);
}

void caseFusion(Context& ctx) {
  auto expectEager = [&](const RunResult& r, const std::string& what, unsigned long long want) {
    ++ctx.report.calls;
    if (r.eagerLaunches.at(0) != want) {
      fail(ctx, what + ": the eager group launched " + std::to_string(r.eagerLaunches[0]) + " collectives, the " +
                    "fusion rules say " + std::to_string(want) +
                    " (the plan launched as many: checked per launch)");
    }
  };
  // 64 small AllReduces in one group: one fused AllReduce (auto, 64 MiB).
  auto many = generate(64, [](int i) {
    return with(reducing(Kind::kAllReduce, weftFloat32, weftSum, 256), [&](Op& o) {
      o.inPlace = i % 3 == 0;
      o.group = 0;
    });
  });
  expectEager(runProgram(ctx, "64 small AllReduces in a group", many), "64 small AllReduces", 1);

  // Fusion ids 2 and 3 and plain calls interleaved, plus AllGathers: one launch per key.
  auto ids = generate(50, [](int i) {
    return with(reducing(Kind::kAllReduce, weftInt32, weftSum, 100 + i), [&](Op& o) {
      o.fusionId = i % 5 == 4 ? -1 : 2 + i % 2;
      o.group = 0;
    });
  });
  for (int i = 0; i < 5; ++i) ids.push_back(makeOp(Kind::kAllGather, weftInt32, 20, 0));
  expectEager(runProgram(ctx, "fusion ids 2, 3 and plain", ids), "fusion ids", 4);

  // Two groups of 30 with an AllReduce between them outside any group.
  auto two =
      generate(61, [](int i) { return reducing(Kind::kAllReduce, weftBfloat16, weftSum, 64, i < 30 ? 0 : 1); });
  two[30].group = -1;
  expectEager(runProgram(ctx, "two groups of 30 and one call", two), "two groups", 3);

  // The communicator's fusion setting at weftPlanEnd decides the plan's buckets: off there gives 20
  // launches per launch whatever the setting at weftPlanBegin or at launch; auto there gives one.
  const auto twenty = generate(20, [](int) { return reducing(Kind::kAllReduce, weftFloat32, weftSum, 100, 0); });
  weftFusionConfig_t off = WEFT_FUSION_CONFIG_INITIALIZER;
  off.mode = weftFusionOff;
  weftComm_t comm = ctx.world.comm;
  for (const bool offAtEnd : {true, false}) {
    const std::string what =
        std::string("20 AllReduces, fusion ") + (offAtEnd ? "off" : "auto") + " at weftPlanEnd";
    Program prog(ctx, what, twenty);
    prog.fill();
    colltest::expectOk(weftCommSetFusion(comm, weftCollAllReduce, offAtEnd ? nullptr : &off), "weftCommSetFusion");
    colltest::expectOk(weftPlanBegin(comm), "weftPlanBegin: " + what);
    prog.issue(Program::kPlanSet);
    colltest::expectOk(weftCommSetFusion(comm, weftCollAllReduce, offAtEnd ? &off : nullptr), "weftCommSetFusion");
    weftPlan_t plan = nullptr;
    colltest::expectOk(weftPlanEnd(comm, &plan), "weftPlanEnd: " + what);
    colltest::expectOk(weftCommSetFusion(comm, weftCollAllReduce, offAtEnd ? nullptr : &off), "weftCommSetFusion");
    for (int launch = 0; launch < 2; ++launch) {
      prog.fill();
      const unsigned long long before = launched(comm);
      colltest::expectOk(weftPlanLaunch(plan, launch ? ctx.stream : nullptr), "weftPlanLaunch: " + what);
      if (launch) colltest::expectOk(weftStreamSynchronize(ctx.stream), "weftStreamSynchronize: " + what);
      const unsigned long long delta = launched(comm) - before;
      ++ctx.report.calls;
      if (delta != (offAtEnd ? 20u : 1u)) {
        fail(ctx, what + ": a launch ran " + std::to_string(delta) + " collectives, expected " +
                      (offAtEnd ? "20" : "1"));
      }
      prog.verify(Program::kPlanSet, "launch " + std::to_string(launch + 1));
    }
    colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy: " + what);
  }
  colltest::expectOk(weftCommSetFusion(comm, weftCollAllReduce, nullptr), "weftCommSetFusion(NULL)");
}

}  // namespace plantest
