// Classification and reuse (weftPlanGetInfo), with the settings read at weftPlanEnd: WEFT_STREAM_CAPACITY
// (ops per stream, 3), WEFT_MAX_STREAMS (64), WEFT_SUBGRAPH_REUSE (unset or -1: at most 1000 ops reused;
// N > 0: N; 0: off; anything else: weftInvalidArgument). The test's own model of the rules predicts every
// number; a case's stated numbers that disagree with it are a bug of the test (fatal).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

#include "plans_test.h"

namespace plantest {

namespace {

struct Expected {
  int numOps = 0, numSubgraphs = 0, opsReused = 0, streamsWithoutReuse = 0, streamsUsed = 0;
  bool operator==(const Expected&) const = default;
};

std::string str(const Expected& e) {
  return "numOps " + std::to_string(e.numOps) + ", numSubgraphs " + std::to_string(e.numSubgraphs) +
         ", opsReused " + std::to_string(e.opsReused) + ", streamsWithoutReuse " +
         std::to_string(e.streamsWithoutReuse) + ", streamsUsed " + std::to_string(e.streamsUsed);
}

// Key = (collective, count, datatype, op, root, communicator, fusion id); a plain call carries id 1.
// Groups of ops of one key, in order of first appearance; a group larger than one stream's capacity is
// reused by one subgraph while the reused ops stay within the limit (a group that would pass it is skipped).
Expected model(const std::vector<Op>& ops, int capacity, int limit) {
  using Key = std::tuple<int, size_t, int, int, int, int, int>;
  std::vector<Key> order;
  std::map<Key, int> sizes;
  for (const Op& op : ops) {
    const Key key{static_cast<int>(op.kind), op.count, op.type, op.op, op.root, op.comm, std::max(op.fusionId, 1)};
    if (sizes[key]++ == 0) order.push_back(key);
  }
  Expected e;
  e.numOps = static_cast<int>(ops.size());
  for (const Key& key : order) {
    const int size = sizes[key];
    if (size > capacity && e.opsReused + size <= limit) {
      ++e.numSubgraphs;
      e.opsReused += size;
    }
  }
  auto ceilDiv = [](int a, int b) { return (a + b - 1) / b; };
  e.streamsWithoutReuse = ceilDiv(e.numOps, capacity);
  e.streamsUsed = e.numSubgraphs + ceilDiv(e.numOps - e.opsReused, capacity);
  return e;
}

void checkInfo(Context& ctx, const std::string& what, const weftPlanInfo_t& info, const Expected& want) {
  ++ctx.report.calls;
  const Expected got{info.numOps, info.numSubgraphs, info.opsReused, info.streamsWithoutReuse, info.streamsUsed};
  if (!(got == want)) fail(ctx, what + ": weftPlanGetInfo says " + str(got) + "; expected " + str(want));
}

// Runs the ops (3 launches, each checked) with the environment and checks the plan's info against the stated
// numbers, which the model must predict.
void runInfo(Context& ctx, const std::string& what, const std::vector<Op>& ops, const Expected& stated,
             const std::vector<std::pair<std::string, std::string>>& env = {}, int capacity = 3,
             int limit = 1000) {
  const Expected predicted = model(ops, capacity, limit);
  if (!(predicted == stated)) {
    colltest::fatal("test bug: " + what + ": the model predicts " + str(predicted) + ", the case states " +
                    str(stated));
  }
  const RunResult r = runProgram(ctx, what, ops, RunOptions{3, env});
  checkInfo(ctx, what, r.infos.at(0), stated);
  if (r.infos.at(0).resourceBytes == 0) fail(ctx, what + ": resourceBytes 0 for a plan of " + str(stated));
}

Op allReduce(weftDataType_t type, size_t count, weftRedOp_t red = weftSum) {
  Op op;
  op.type = type;
  op.count = count;
  op.op = red;
  return op;
}

std::vector<Op> identical(int n, weftDataType_t type = weftFloat32) {
  return generate(n, [&](int i) {
    Op op = allReduce(type, 256);
    op.inPlace = i % 4 == 3;
    return op;
  });
}

// Two groups of 30: float and int32 AllReduces, interleaved or one after the other.
std::vector<Op> twoGroups(bool interleaved) {
  return generate(60, [&](int i) {
    const bool first = interleaved ? i % 2 == 0 : i < 30;
    return allReduce(first ? weftFloat32 : weftInt32, 128);
  });
}

// The failure of a plan over 30 identical AllReduces with reuse off and at most 4 streams: 10 are needed.
void expectTooManyStreams(Context& ctx, const std::string& what, bool setEnv) {
  const std::vector<Op> ops = identical(30);
  Program prog(ctx, what, ops);
  prog.fill();
  colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin: " + what);
  prog.issue(Program::kPlanSet);
  weftPlan_t plan = nullptr;
  weftResult_t result;
  {
    ScopedEnv env(setEnv ? std::vector<std::pair<std::string, std::string>>{{"WEFT_SUBGRAPH_REUSE", "0"},
                                                                            {"WEFT_MAX_STREAMS", "4"}}
                         : std::vector<std::pair<std::string, std::string>>{});
    result = weftPlanEnd(ctx.world.comm, &plan);
  }
  const std::string message = weftGetLastErrorMessage() ? weftGetLastErrorMessage() : "";
  expectResult(ctx, result, weftInvalidUsage, what + ": weftPlanEnd");
  if (result == weftSuccess) {
    colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy: " + what);
    return;
  }
  const bool namesSetting = message.find("WEFT_SUBGRAPH_REUSE") != std::string::npos ||
                            message.find("WEFT_MAX_STREAMS") != std::string::npos;
  if (message.find("10") == std::string::npos || !namesSetting) {
    fail(ctx, what + ": the message should say that 10 streams are needed and name WEFT_SUBGRAPH_REUSE or " +
                  "WEFT_MAX_STREAMS: \"" + message + "\"");
  }
  // The failed weftPlanEnd ends the recording: the communicator runs calls again.
  runProgram(ctx, what + ", then a plan of 3 calls", identical(3), RunOptions{1, {}});
}

// WEFT_SUBGRAPH_REUSE values weftPlanEnd must reject with weftInvalidArgument.
void expectBadReuse(Context& ctx, const std::string& value, bool setEnv) {
  const std::string what = "WEFT_SUBGRAPH_REUSE=" + value;
  float send[16] = {}, recv[16] = {};
  colltest::expectOk(weftPlanBegin(ctx.world.comm), "weftPlanBegin: " + what);
  colltest::expectOk(weftAllReduce(send, recv, 16, weftFloat32, weftSum, ctx.world.comm, nullptr), "record");
  weftPlan_t plan = nullptr;
  weftResult_t result;
  {
    ScopedEnv env(setEnv ? std::vector<std::pair<std::string, std::string>>{{"WEFT_SUBGRAPH_REUSE", value}}
                         : std::vector<std::pair<std::string, std::string>>{});
    result = weftPlanEnd(ctx.world.comm, &plan);
  }
  expectResult(ctx, result, weftInvalidArgument, what + ": weftPlanEnd");
  if (result == weftSuccess) colltest::expectOk(weftPlanDestroy(plan), "weftPlanDestroy: " + what);
}

}  // namespace

void caseReuse(Context& ctx) {
  // (a) 30 identical AllReduces: one subgraph serves all, one stream instead of 10.
  runInfo(ctx, "30 identical AllReduces", identical(30), {30, 1, 30, 10, 1});
  // A key group of exactly the capacity is not reused; one more op is.
  runInfo(ctx, "3 identical AllReduces", identical(3), {3, 0, 0, 1, 1});
  runInfo(ctx, "4 identical AllReduces", identical(4), {4, 1, 4, 2, 1});
  runInfo(ctx, "one AllReduce", identical(1), {1, 0, 0, 1, 1});
  // Every part of the key tells groups apart: fusion id (a plain call carries 1), root, count, op, type.
  std::vector<Op> ops;
  for (int i = 0; i < 4; ++i) {
    Op plainOrId1 = allReduce(weftFloat32, 100);
    plainOrId1.fusionId = i % 2 ? 1 : -1;
    Op id2 = allReduce(weftFloat32, 100);
    id2.fusionId = 2;
    Op bcast0;
    bcast0.kind = Kind::kBroadcast;
    bcast0.count = 100;
    Op bcast1 = bcast0;
    bcast1.root = 1;
    Op count101 = allReduce(weftFloat32, 101);
    count101.inPlace = i % 2;
    for (const Op& op : {plainOrId1, id2, bcast0, bcast1, count101}) ops.push_back(op);
  }
  ops.push_back(allReduce(weftFloat32, 100, weftMax));
  ops.push_back(allReduce(weftFloat32, 100, weftMax));
  ops.push_back(allReduce(weftFloat64, 100));
  for (int i = 0; i < 3; ++i) {
    Op gather;
    gather.kind = Kind::kAllGather;
    gather.count = 100;
    ops.push_back(gather);
  }
  runInfo(ctx, "five keys of 4 and six other ops", ops, {26, 5, 20, 9, 7});
}

void caseReuseEnv(Context& ctx) {
  using Env = std::vector<std::pair<std::string, std::string>>;
  // (b) A limit of 40 ops: the first group of 30 is reused, the second (it would make 60) is not.
  const Env reuse40 = {{"WEFT_SUBGRAPH_REUSE", "40"}};
  runInfo(ctx, "reuse 40: float and int32 x 30 interleaved", twoGroups(true), {60, 1, 30, 20, 11}, reuse40, 3, 40);
  runInfo(ctx, "reuse 40: float x 30 then int32 x 30", twoGroups(false), {60, 1, 30, 20, 11}, reuse40, 3, 40);
  // Greedy: 30 reused, 20 skipped (50 > 40), then 10 fits (40).
  std::vector<Op> greedy = identical(30);
  for (const Op& op : identical(20, weftInt32)) greedy.push_back(op);
  for (const Op& op : identical(10, weftFloat64)) greedy.push_back(op);
  runInfo(ctx, "reuse 40: groups of 30, 20, 10", greedy, {60, 2, 40, 20, 9}, reuse40, 3, 40);
  // -1 is the default (1000); 20 is below the group's 30; 0 is off.
  runInfo(ctx, "reuse -1: 30 identical", identical(30), {30, 1, 30, 10, 1}, {{"WEFT_SUBGRAPH_REUSE", "-1"}});
  runInfo(ctx, "reuse 20: 30 identical", identical(30), {30, 0, 0, 10, 10}, {{"WEFT_SUBGRAPH_REUSE", "20"}}, 3,
          20);
  runInfo(ctx, "reuse 0: 30 identical", identical(30), {30, 0, 0, 10, 10}, {{"WEFT_SUBGRAPH_REUSE", "0"}}, 3, 0);
  // A stream capacity of 5: a group of 5 fits one stream and is not reused, 12 is.
  std::vector<Op> cap = identical(12);
  for (const Op& op : identical(5, weftInt32)) cap.push_back(op);
  for (const Op& op : identical(4, weftFloat64)) cap.push_back(op);
  runInfo(ctx, "capacity 5: groups of 12, 5, 4", cap, {21, 1, 12, 5, 3}, {{"WEFT_STREAM_CAPACITY", "5"}}, 5);
  // (c) Reuse off and at most 4 streams: 10 needed, weftInvalidUsage. Exactly enough streams, or reuse on,
  // and the plan compiles.
  expectTooManyStreams(ctx, "reuse 0, at most 4 streams, 30 ops", true);
  runInfo(ctx, "reuse 0, at most 10 streams", identical(30), {30, 0, 0, 10, 10},
          {{"WEFT_SUBGRAPH_REUSE", "0"}, {"WEFT_MAX_STREAMS", "10"}}, 3, 0);
  runInfo(ctx, "reuse on, at most 4 streams", identical(30), {30, 1, 30, 10, 1}, {{"WEFT_MAX_STREAMS", "4"}});
  // (d) Values that are not a number, or a negative other than -1.
  for (const char* value : {"abc", "-2", "12abc"}) expectBadReuse(ctx, value, true);
}

void caseEnvExternal(Context& ctx, const std::string& which) {
  if (which == "reuse40") {
    runInfo(ctx, "env reuse 40: float and int32 x 30 interleaved", twoGroups(true), {60, 1, 30, 20, 11}, {}, 3,
            40);
  } else if (which == "off4") {
    expectTooManyStreams(ctx, "env reuse 0, at most 4 streams, 30 ops", false);
  } else if (which == "bad") {
    expectBadReuse(ctx, std::getenv("WEFT_SUBGRAPH_REUSE") ? std::getenv("WEFT_SUBGRAPH_REUSE") : "(unset)",
                   false);
  } else {
    colltest::fatal("unknown --env-case " + which);
  }
}

}  // namespace plantest
