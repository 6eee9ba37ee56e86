// Case 10: a plan's streams run at once (docs/plans.md, "Streams").
// - Dependencies: with one operation per stream (WEFT_STREAM_CAPACITY=1, reuse off) every operation runs on a
//   lane of its own, so each chain of calls that read an earlier call's output crosses lanes; launches must
//   still equal the reference and, bit for bit, the eager calls.
// - Overlap: eight independent AllReduces on eight streams, with rank 1 arriving 50 ms late: on rank 0 every
//   lane starts its AllReduce and waits for rank 1, so several steps run at once (read from the plan, white
//   box: fusion/plan.h). The communicator forces Weft's ring (WEFT_ALGO), since a backend takes one collective
//   at a time.
// - Resources: 100 identical AllReduces of 1, 4 and 64 KiB hold at least 10 times less with reuse (one stream)
//   than without (34 streams, each a lane with its scratch).
#include <mpi.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fusion/plan.h"
#include "plans_test.h"

namespace plantest {
namespace {

const std::vector<std::pair<std::string, std::string>> kOneOpPerStream = {{"WEFT_STREAM_CAPACITY", "1"},
                                                                          {"WEFT_SUBGRAPH_REUSE", "0"}};

void dependencies(Context& ctx) {
  std::vector<Op> ops;
  auto add = [&](Op op) {
    ops.push_back(op);
    return static_cast<int>(ops.size()) - 1;
  };
  for (int chain = 0; chain < 3; ++chain) {
    const size_t count = 700 + 300 * static_cast<size_t>(chain);
    Op first = makeOp(Kind::kAllReduce, weftFloat32, count);
    first.op = chain == 1 ? weftMax : weftSum;
    const int a = add(first);
    Op second = makeOp(Kind::kAllReduce, weftFloat32, count);
    second.inputOf = a;
    const int b = add(second);
    Op broadcast = makeOp(Kind::kBroadcast, weftFloat32, count);
    broadcast.inputOf = b;
    broadcast.root = chain % 2;
    const int c = add(broadcast);
    Op gather = makeOp(Kind::kAllGather, weftFloat32, count);
    gather.inputOf = c;
    add(gather);
    add(makeOp(Kind::kReduceScatter, weftInt32, 100 + static_cast<size_t>(chain)));
  }
  runProgram(ctx, "one op per stream, chains across streams", ops, RunOptions{5, kOneOpPerStream});
}

void overlap(Context& ctx) {
  colltest::CommView view = colltest::createWorldComm("allreduce:ring:0-inf");
  unsetenv("WEFT_ALGO");  // read when a communicator is made: only this one forces the ring
  constexpr int kCalls = 8;
  constexpr size_t kCount = 4096;
  std::vector<std::vector<float>> send(kCalls, std::vector<float>(kCount)),
      recv(kCalls, std::vector<float>(kCount));
  weftPlan_t plan = nullptr;
  {
    ScopedEnv env({{"WEFT_STREAM_CAPACITY", "1"}, {"WEFT_SUBGRAPH_REUSE", "0"}, {"WEFT_PLAN_THREADS", "7"}});
    colltest::expectOk(weftPlanBegin(view.comm), "weftPlanBegin");
    for (int i = 0; i < kCalls; ++i) {
      colltest::expectOk(
          weftAllReduce(send[i].data(), recv[i].data(), kCount, weftFloat32, weftSum, view.comm, nullptr),
          "weftAllReduce (recorded)");
    }
    colltest::expectOk(weftPlanEnd(view.comm, &plan), "weftPlanEnd");
  }
  for (int launch = 0; launch < 3; ++launch) {
    // Small integers: every sum is exact in float, whatever the order.
    for (int i = 0; i < kCalls; ++i) {
      for (size_t j = 0; j < kCount; ++j)
        send[i][j] = static_cast<float>((view.rank + 1) * (i + launch + 1) + j % 7);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (view.rank == 1) usleep(50 * 1000);
    expectResult(ctx, weftPlanLaunch(plan, nullptr), weftSuccess, "launch " + std::to_string(launch));
    const int n = view.size;
    for (int i = 0; i < kCalls; ++i) {
      for (size_t j = 0; j < kCount; ++j) {
        const float want = static_cast<float>(n * (n + 1) / 2 * (i + launch + 1) + n * static_cast<int>(j % 7));
        if (recv[i][j] != want) {
          fail(ctx, "overlap launch " + std::to_string(launch) + ": call " + std::to_string(i) + " element " +
                        std::to_string(j) + " is " + std::to_string(recv[i][j]) + ", expected " +
                        std::to_string(want));
          break;
        }
      }
    }
  }
  // The first launch pinned each call's algorithm: the ring WEFT_ALGO forces (white box).
  for (const auto& lane : plan->compiled.run->program().lanes) {
    for (const weft::PlanStep& step : lane) {
      ++ctx.report.calls;
      if (step.op.algorithm != weft::Algorithm::Ring)
        fail(ctx, "overlap: a step's algorithm was not pinned to the forced ring after the first launch");
    }
  }
  const uint32_t peak = plan->compiled.run->peakConcurrentSteps();
  if (view.rank == 0) {
    ++ctx.report.calls;
    std::printf("  overlap: %u of %d streams' AllReduces ran at once on rank 0 (rank 1 50 ms late)\n", peak,
                kCalls);
    if (peak < 2)
      fail(ctx, "overlap: the streams' AllReduces ran one at a time (peak " + std::to_string(peak) + ")");
  }
  colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy");
  colltest::destroyComm(view);
}

// resourceBytes of 100 identical AllReduces of `bytes`, with reuse (one stream: one compiled operation and a pair
// of buffer pointers per call) and without (34 streams, each a lane with scratch reserved for its operations,
// and a thread where the cores allow): at least 10 times less with reuse.
void resources(Context& ctx, size_t bytes) {
  const std::vector<Op> ops(100, makeOp(Kind::kAllReduce, weftFloat32, bytes / sizeof(float)));
  const std::string what = "100 x " + std::to_string(bytes) + " B";
  const RunResult reused = runProgram(ctx, what + ", reuse", ops, RunOptions{2, {}});
  const RunResult apart = runProgram(ctx, what + ", no reuse", ops, RunOptions{2, {{"WEFT_SUBGRAPH_REUSE", "0"}}});
  const weftPlanInfo_t& with = reused.infos.at(0);
  const weftPlanInfo_t& without = apart.infos.at(0);
  ++ctx.report.calls;
  if (with.streamsUsed != 1 || without.streamsUsed != 34) {
    fail(ctx, "resources: streams used " + std::to_string(with.streamsUsed) + " with reuse and " +
                  std::to_string(without.streamsUsed) + " without; expected 1 and 34");
  }
  if (with.resourceBytes == 0 || with.resourceBytes * 10 > without.resourceBytes) {
    fail(ctx, "resources: " + what + ": " + std::to_string(with.resourceBytes) + " bytes with reuse, " +
                  std::to_string(without.resourceBytes) + " without: not 10 times less");
  }
  if (colltest::harness().worldRank == 0) {
    std::printf("  resources: %s hold %zu bytes with reuse, %zu without (%.4f, at most 0.1)\n", what.c_str(),
                with.resourceBytes, without.resourceBytes,
                static_cast<double>(with.resourceBytes) / static_cast<double>(without.resourceBytes));
  }
}

// A WEFT_PLAN_THREADS that is not -1 or 0..64 is refused at weftPlanEnd, naming it; the recording ends.
void badThreadSetting(Context& ctx) {
  for (const char* bad : {"65", "-2", "two"}) {
    std::vector<float> data(16);
    weftPlan_t plan = nullptr;
    ScopedEnv env(std::vector<std::pair<std::string, std::string>>{{"WEFT_PLAN_THREADS", bad}});
    colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin");
    colltest::expectOk(
        weftAllReduce(data.data(), data.data(), data.size(), weftFloat32, weftSum, ctx.world.comm, nullptr),
        "weftAllReduce (recorded)");
    expectResult(ctx, weftPlanEnd(ctx.world.comm, &plan), weftInvalidArgument,
                 std::string("weftPlanEnd with WEFT_PLAN_THREADS=") + bad);
    if (std::string(weftGetLastErrorMessage()).find("WEFT_PLAN_THREADS") == std::string::npos)
      fail(ctx, std::string("WEFT_PLAN_THREADS=") + bad +
                    ": the message does not name it: " + weftGetLastErrorMessage());
    if (plan != nullptr) fail(ctx, std::string("WEFT_PLAN_THREADS=") + bad + ": weftPlanEnd returned a plan");
  }
}

}  // namespace

void caseStreams(Context& ctx) {
  badThreadSetting(ctx);
  dependencies(ctx);
  overlap(ctx);
  for (size_t bytes : {size_t{1} << 10, size_t{4} << 10, size_t{64} << 10}) resources(ctx, bytes);
}

}  // namespace plantest
