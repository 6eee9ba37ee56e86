// 9. Bad input: every rejected call returns weftInvalidArgument with a message, changes nothing, and the
// communicator goes on working.
#include <cstdint>

#include "fusion_test.h"

namespace fusiontest {

namespace {

void expectInvalid(Context& ctx, weftResult_t result, const std::string& what) {
  const char* message = weftGetLastErrorMessage();
  if (result != weftInvalidArgument) {
    colltest::reportFailure(ctx.report,
                            "case " + ctx.caseName + " | " + what + " returned " + std::to_string(result) + " (" +
                                weftGetErrorString(result) +
                                "), expected weftInvalidArgument; message: " + (message ? message : "(null)"));
  } else if (message == nullptr || message[0] == '\0') {
    colltest::reportFailure(ctx.report, "case " + ctx.caseName + " | " + what + ": no error message");
  }
  ++ctx.report.calls;
}

}  // namespace

void caseBadInput(Context& ctx) {
  weftComm_t comm = ctx.view.comm;
  // A setting the bad calls must leave in place, checked at the end.
  Settings s{};
  s.allReduce = {weftFusionSize, size_t{1} << 20, {}};
  s.allGather.mode = weftFusionOff;
  applyAll(comm, s);

  const int ascending[2] = {20, 35};
  const int descending[2] = {35, 20};
  auto config = [](weftFusionMode_t mode, const int* splits, int numSplits) {
    weftFusionConfig_t c = WEFT_FUSION_CONFIG_INITIALIZER;
    c.mode = mode;
    c.splitIndices = splits;
    c.numSplitIndices = numSplits;
    return c;
  };
  weftFusionConfig_t c = config(weftFusionAuto, nullptr, 0);
  c.magic = 0x12345678u;
  expectInvalid(ctx, weftCommSetFusion(comm, weftCollAllReduce, &c), "weftCommSetFusion config magic 0x12345678");
  c.magic = WEFT_OP_ATTR_MAGIC;
  expectInvalid(ctx, weftCommSetFusion(comm, weftCollAllReduce, &c),
                "weftCommSetFusion config with the attr magic");
  c = config(weftFusionIndex, ascending, 2);
  expectInvalid(ctx, weftCommSetFusion(comm, weftCollAllGather, &c), "weftCommSetFusion index mode on AllGather");
  expectInvalid(ctx, weftCommSetFusion(comm, weftCollReduceScatter, &c),
                "weftCommSetFusion index mode on ReduceScatter");
  c = config(weftFusionIndex, descending, 2);
  expectInvalid(ctx, weftCommSetFusion(comm, weftCollAllReduce, &c), "weftCommSetFusion index list 35,20");
  c = config(weftFusionIndex, nullptr, 2);
  expectInvalid(ctx, weftCommSetFusion(comm, weftCollAllReduce, &c), "weftCommSetFusion index list NULL of 2");
  c = config(static_cast<weftFusionMode_t>(42), nullptr, 0);
  expectInvalid(ctx, weftCommSetFusion(comm, weftCollAllReduce, &c), "weftCommSetFusion mode 42");
  c = config(weftFusionAuto, nullptr, 0);
  expectInvalid(ctx, weftCommSetFusion(comm, weftCollBroadcast, &c), "weftCommSetFusion weftCollBroadcast");
  expectInvalid(ctx, weftCommSetFusion(comm, weftCollAllToAll, &c), "weftCommSetFusion weftCollAllToAll");
  expectInvalid(ctx, weftCommSetFusion(comm, static_cast<weftCollType_t>(99), &c), "weftCommSetFusion coll 99");
  expectInvalid(ctx, weftCommSetFusion(nullptr, weftCollAllReduce, &c), "weftCommSetFusion comm NULL");

  float send[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float recv[64] = {};
  weftOpAttr_t attr = WEFT_OP_ATTR_INITIALIZER;
  attr.magic = WEFT_FUSION_CONFIG_MAGIC;
  expectInvalid(ctx, weftAllReduceEx(send, recv, 8, weftFloat32, weftSum, comm, nullptr, &attr),
                "weftAllReduceEx attr with the config magic");
  attr.magic = 0;
  expectInvalid(ctx, weftAllGatherEx(send, recv, 8, weftFloat32, comm, nullptr, &attr),
                "weftAllGatherEx attr magic 0");
  expectInvalid(ctx, weftReduceScatterEx(recv, send, 1, weftFloat32, weftSum, comm, nullptr, &attr),
                "weftReduceScatterEx attr magic 0");

  weftCommStats_t stats = WEFT_COMM_STATS_INITIALIZER;
  expectInvalid(ctx, weftCommGetStats(comm, nullptr), "weftCommGetStats stats NULL");
  expectInvalid(ctx, weftCommGetStats(nullptr, &stats), "weftCommGetStats comm NULL");
  stats.magic = WEFT_OP_ATTR_MAGIC;
  expectInvalid(ctx, weftCommGetStats(comm, &stats), "weftCommGetStats stats with the attr magic");

  // The setting from before the rejected calls is still the one in effect, and the communicator works.
  std::vector<OpSpec> ops;
  for (int i = 0; i < 10; ++i) {
    OpSpec op;
    op.count = countFor(256 << 10, weftFloat32);
    op.inPlace = i % 2;
    ops.push_back(op);
  }
  runModeled(ctx, "size 1 MiB after the rejected calls, 10 x 256 KiB", ops, Layout::kSeparate, s, 3);
  std::vector<OpSpec> gathers(6);
  for (OpSpec& op : gathers) {
    op.coll = weftCollAllGather;
    op.count = 50;
  }
  runModeled(ctx, "AllGather off after the rejected calls", gathers, Layout::kSeparate, s, 6);
}

}  // namespace fusiontest
