// A launch allocates nothing (docs/plans.md): once a plan has run, launching it again on the NULL stream makes
// no allocation anywhere in the process (operator new counted program-wide, libweft and plugins included),
// for every collective, a fused group, a run of independent AllReduces and Send/Recv, on the NULL stream and
// on a created one, also while waiting for a late rank; each launch is still checked against the reference. Eager
// calls and eager groups (fused and not) likewise. A failure names the first allocation's call stack.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "alloc_count.h"
#include "plans_test.h"

namespace plantest {

namespace {

// How late a rank comes in the rounds that test waiting: longer than any transport's or backend's sleep
// slice, so that the others reach their slowest waiting paths.
constexpr std::chrono::milliseconds kLate{30};

// Eager calls on the NULL stream allocate nothing either, once the first has run: AllReduce of 1000 and of
// 70000 int32 (rank r, element e contributes r + e % 7), AllGather and Broadcast of 500, a group of one Send and
// one Recv around the ring; every result checked exactly (integers: the sum is independent of the order).
// In the last round rank 0 comes late to the Send/Recv, so that its neighbours wait past every transport's
// short sleep (shm's doorbell slice is 10 ms) and the control channel's periodic poll.
void eagerAllocations(Context& ctx) {
  const colltest::CommView& v = ctx.world;
  constexpr size_t kSmall = 1000, kLarge = 70000, kGather = 500;
  std::vector<int32_t> send(kLarge), recv(kLarge), gathered(kGather * static_cast<size_t>(v.size)), bcast(kGather);
  for (size_t e = 0; e < kLarge; ++e) send[e] = v.rank + static_cast<int32_t>(e % 7);
  for (int round = 0; round < 5; ++round) {
    std::fill(recv.begin(), recv.end(), -1);
    std::fill(gathered.begin(), gathered.end(), -1);
    for (size_t e = 0; e < kGather; ++e) bcast[e] = v.rank == 0 ? static_cast<int32_t>(e * 3 + round) : -1;
    std::vector<int32_t> ringIn(kGather, -1);
    const int next = (v.rank + 1) % v.size, prev = (v.rank + v.size - 1) % v.size;
    weftResult_t results[8];
    uint64_t allocations = 0;
    {
      CountAllocations counting;
      results[0] = weftAllReduce(send.data(), recv.data(), kSmall, weftInt32, weftSum, v.comm, nullptr);
      results[1] =
          weftAllReduce(send.data(), recv.data() + kSmall, kLarge - kSmall, weftInt32, weftSum, v.comm, nullptr);
      results[2] = weftAllGather(send.data(), gathered.data(), kGather, weftInt32, v.comm, nullptr);
      results[3] = weftBroadcast(bcast.data(), bcast.data(), kGather, weftInt32, 0, v.comm, nullptr);
      if (round == 4 && v.rank == 0) std::this_thread::sleep_for(kLate);
      results[4] = weftGroupStart();  // a ring of Send/Recv, as pipeline parallelism issues them
      results[5] = weftSend(send.data(), kGather, weftInt32, next, v.comm, nullptr);
      results[6] = weftRecv(ringIn.data(), kGather, weftInt32, prev, v.comm, nullptr);
      results[7] = weftGroupEnd();
      allocations = counting.count();
    }
    const std::string when = "eager round " + std::to_string(round + 1);
    for (weftResult_t r : results) colltest::expectOk(r, when);
    ctx.report.calls += 6;
    const auto ranks = static_cast<int64_t>(v.size);
    size_t wrong = 0;
    for (size_t e = 0; e < kLarge; ++e) {
      const size_t input = e < kSmall ? e : e - kSmall;  // the second call starts at send[0] again
      wrong += recv[e] != ranks * (ranks - 1) / 2 + ranks * static_cast<int64_t>(input % 7);
    }
    for (int r = 0; r < v.size; ++r) {
      for (size_t e = 0; e < kGather; ++e) wrong += gathered[r * kGather + e] != r + static_cast<int32_t>(e % 7);
    }
    for (size_t e = 0; e < kGather; ++e) wrong += bcast[e] != static_cast<int32_t>(e * 3 + round);
    for (size_t e = 0; e < kGather; ++e) wrong += ringIn[e] != prev + static_cast<int32_t>(e % 7);
    ctx.report.elements += kLarge + gathered.size() + 2 * kGather;
    if (wrong != 0) fail(ctx, when + ": " + std::to_string(wrong) + " wrong elements");
    if (round >= 2 && allocations != 0) {
      fail(ctx, when + " allocated " + std::to_string(allocations) +
                    " times with operator new; eager calls after the first must allocate nothing; " +
                    firstCountedAllocation());
    }
  }
}

// Eager groups allocate nothing either once one like them has run on the thread (the fusion planner and the
// group's launch list keep their memory): 200 AllReduces of 256 int32 fused into one, 20 AllGathers of 100
// fused, and 50 AllReduces with fusion off, each on a communicator split off the world for its setting;
// every result checked exactly.
void groupAllocations(Context& ctx) {
  const colltest::CommView& v = ctx.world;
  constexpr size_t kReduces = 200, kReduceCount = 256, kGathers = 20, kGatherCount = 100, kUnfused = 50;
  weftComm_t fused = nullptr, unfused = nullptr;
  colltest::expectOk(weftCommSplit(v.comm, 0, v.rank, &fused), "weftCommSplit (fused)");
  colltest::expectOk(weftCommSplit(v.comm, 0, v.rank, &unfused), "weftCommSplit (unfused)");
  weftFusionConfig_t on = WEFT_FUSION_CONFIG_INITIALIZER, off = WEFT_FUSION_CONFIG_INITIALIZER;
  on.mode = weftFusionAuto;
  for (weftCollType_t coll : {weftCollAllReduce, weftCollAllGather})
    colltest::expectOk(weftCommSetFusion(fused, coll, &on), "weftCommSetFusion auto");
  colltest::expectOk(weftCommSetFusion(unfused, weftCollAllReduce, &off), "weftCommSetFusion off");
  const auto ranks = static_cast<size_t>(v.size);
  std::vector<std::vector<int32_t>> in(kReduces, std::vector<int32_t>(kReduceCount));
  std::vector<std::vector<int32_t>> out(kReduces, std::vector<int32_t>(kReduceCount));
  std::vector<std::vector<int32_t>> gathered(kGathers, std::vector<int32_t>(kGatherCount * ranks));
  for (size_t c = 0; c < kReduces; ++c) {
    for (size_t e = 0; e < kReduceCount; ++e) in[c][e] = v.rank * 3 + static_cast<int32_t>((c + e) % 11);
  }
  for (int round = 0; round < 5; ++round) {
    for (auto& o : out) std::fill(o.begin(), o.end(), -1);
    for (auto& g : gathered) std::fill(g.begin(), g.end(), -1);
    size_t failed = 0;  // calls that did not return weftSuccess
    uint64_t allocations = 0;
    {
      CountAllocations counting;
      failed += weftGroupStart() != weftSuccess;
      for (size_t c = 0; c < kReduces; ++c) {
        failed += weftAllReduce(in[c].data(), out[c].data(), kReduceCount, weftInt32, weftSum, fused, nullptr) !=
                  weftSuccess;
      }
      failed += weftGroupEnd() != weftSuccess;
      failed += weftGroupStart() != weftSuccess;
      for (size_t c = 0; c < kGathers; ++c) {
        failed += weftAllGather(in[c].data(), gathered[c].data(), kGatherCount, weftInt32, fused, nullptr) !=
                  weftSuccess;
      }
      failed += weftGroupEnd() != weftSuccess;
      failed += weftGroupStart() != weftSuccess;  // overwrites calls 100-149's outputs with a Max
      for (size_t c = 0; c < kUnfused; ++c) {
        failed += weftAllReduce(in[c].data(), out[c + 100].data(), kReduceCount, weftInt32, weftMax, unfused,
                                nullptr) != weftSuccess;
      }
      failed += weftGroupEnd() != weftSuccess;
      allocations = counting.count();
    }
    const std::string when = "group round " + std::to_string(round + 1);
    if (failed != 0)
      fail(ctx, when + ": " + std::to_string(failed) + " calls failed: " + weftGetLastErrorMessage());
    ctx.report.calls += kReduces + kGathers + kUnfused;
    const auto sumOfRanks = static_cast<int32_t>(3 * ranks * (ranks - 1) / 2);
    size_t wrong = 0;
    for (size_t c = 0; c < kReduces; ++c) {
      for (size_t e = 0; e < kReduceCount; ++e) {
        const auto base = static_cast<int32_t>((c + e) % 11);
        const bool maxed = c >= 100 && c < 100 + kUnfused;  // the unfused group's Max of call c - 100
        const auto baseMax = static_cast<int32_t>((c - 100 + e) % 11);
        const int32_t want = maxed ? 3 * (v.size - 1) + baseMax : static_cast<int32_t>(ranks) * base + sumOfRanks;
        wrong += out[c][e] != want;
      }
    }
    for (size_t c = 0; c < kGathers; ++c) {
      for (size_t r = 0; r < ranks; ++r) {
        for (size_t e = 0; e < kGatherCount; ++e)
          wrong += gathered[c][r * kGatherCount + e] != static_cast<int32_t>(r * 3 + (c + e) % 11);
      }
    }
    ctx.report.elements += kReduces * kReduceCount + kGathers * kGatherCount * ranks;
    if (wrong != 0) fail(ctx, when + ": " + std::to_string(wrong) + " wrong elements");
    if (round >= 2 && allocations != 0) {
      fail(ctx, when + " allocated " + std::to_string(allocations) +
                    " times with operator new; groups after the first of their kind must allocate nothing; " +
                    firstCountedAllocation());
    }
  }
  colltest::expectOk(weftCommDestroy(fused), "weftCommDestroy");
  colltest::expectOk(weftCommDestroy(unfused), "weftCommDestroy");
}

}  // namespace

void caseLaunchAllocations(Context& ctx) {
  constexpr int kWarmLaunches = 2;  // the first launch sets up what the communicator keeps (e.g. its backend)
  constexpr int kCountedLaunches = 3;
  const std::vector<Op> ops = {
      makeOp(Kind::kAllReduce, weftFloat32, 256),     makeOp(Kind::kAllReduce, weftFloat32, 1000),
      makeOp(Kind::kAllReduce, weftFloat32, 70000),   makeOp(Kind::kAllGather, weftInt32, 300),
      makeOp(Kind::kReduceScatter, weftFloat64, 200), makeOp(Kind::kBroadcast, weftInt64, 5000),
      makeOp(Kind::kReduce, weftFloat32, 4000),       makeOp(Kind::kAllToAll, weftInt32, 64),
      makeOp(Kind::kAllReduce, weftFloat32, 100, 0),  makeOp(Kind::kAllReduce, weftFloat32, 300, 0),
      makeOp(Kind::kAllGather, weftFloat32, 50, 0),   makeOp(Kind::kBarrier, weftFloat32, 0),
      makeOp(Kind::kSendRecv, weftInt8, 1000),        makeOp(Kind::kAllReduce, weftInt32, 2 << 20),
  };
  // With the default settings, then with every operation on a stream of its own and three plan threads
  // besides the launching one (their lanes and waits allocate nothing either).
  for (const bool ownStreams : {false, true}) {
    Program prog(ctx,
                 ownStreams ? "launch allocations, a stream per operation, 3 plan threads" : "launch allocations",
                 ops);
    prog.fill();
    colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin: " + prog.what());
    prog.issue(Program::kPlanSet);
    weftPlan_t plan = nullptr;
    {
      ScopedEnv env(ownStreams ? std::vector<std::pair<std::string, std::string>>{{"WEFT_STREAM_CAPACITY", "1"},
                                                                                  {"WEFT_SUBGRAPH_REUSE", "0"},
                                                                                  {"WEFT_PLAN_THREADS", "3"}}
                               : std::vector<std::pair<std::string, std::string>>{});
      colltest::expectOk(weftPlanEnd(ctx.world.comm, &plan), "weftPlanEnd: " + prog.what());
    }
    // On the NULL stream, then on the created stream (the launch queued, then waited for: the stream's
    // worker thread allocates nothing either, nor does queueing).
    for (weftStream_t stream : {static_cast<weftStream_t>(nullptr), ctx.stream}) {
      const std::string on = (stream == nullptr ? "NULL stream" : "created stream") +
                             std::string(ownStreams ? " (a stream per operation)" : "");
      for (int launch = 0; launch < kWarmLaunches + kCountedLaunches; ++launch) {
        const std::string when = "launch " + std::to_string(launch + 1) + " on the " + on;
        prog.fill();
        const std::string call = "weftPlanLaunch: " + when;  // made before counting starts
        uint64_t allocations = 0;
        weftResult_t results[2] = {weftSuccess, weftSuccess};
        // The last launch: rank 0 comes late, so that the others wait long (see kLate).
        if (launch + 1 == kWarmLaunches + kCountedLaunches && ctx.world.rank == 0)
          std::this_thread::sleep_for(kLate);
        {
          CountAllocations counting;
          results[0] = weftPlanLaunch(plan, stream);
          if (stream != nullptr) results[1] = weftStreamSynchronize(stream);
          allocations = counting.count();
        }
        for (weftResult_t r : results) colltest::expectOk(r, call);
        ++ctx.report.calls;
        prog.verify(Program::kPlanSet, when);
        if (launch >= kWarmLaunches && allocations != 0) {
          fail(ctx, when + " allocated " + std::to_string(allocations) +
                        " times with operator new; a launch after the first must allocate nothing; " +
                        firstCountedAllocation());
        }
      }
    }
    colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy: " + prog.what());
  }
  eagerAllocations(ctx);
  groupAllocations(ctx);
}

}  // namespace plantest
