// The C ABI on one rank: bad input gets a clear error, never a crash; trivial collectives are right.
#include <gtest/gtest.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "weft/weft.h"

namespace {

std::string lastError() { return weftGetLastErrorMessage(); }

class OneRank : public ::testing::Test {
 protected:
  void SetUp() override {
    weftUniqueId id;
    ASSERT_EQ(weftGetUniqueId(&id), weftSuccess) << lastError();
    ASSERT_EQ(weftCommInitRank(&comm, 1, id, 0), weftSuccess) << lastError();
  }
  void TearDown() override {
    if (comm) {
      EXPECT_EQ(weftCommDestroy(comm), weftSuccess) << lastError();
    }
  }
  // Expects `result` to be `code` with a message that mentions `word`.
  static void expectError(weftResult_t result, weftResult_t code, const char* word) {
    EXPECT_EQ(result, code) << weftGetErrorString(result);
    EXPECT_NE(lastError().find(word), std::string::npos) << "message: " << lastError();
  }
  weftComm_t comm = nullptr;
};

TEST_F(OneRank, RankAndCount) {
  int n = 0, r = -1;
  EXPECT_EQ(weftCommCount(comm, &n), weftSuccess);
  EXPECT_EQ(weftCommUserRank(comm, &r), weftSuccess);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(r, 0);
}

TEST_F(OneRank, NullArgumentsAreNamed) {
  float x = 1;
  expectError(weftAllReduce(&x, &x, 1, weftFloat32, weftSum, nullptr, nullptr), weftInvalidArgument, "comm");
  expectError(weftAllReduce(nullptr, &x, 1, weftFloat32, weftSum, comm, nullptr), weftInvalidArgument, "sendbuff");
  expectError(weftAllReduce(&x, nullptr, 1, weftFloat32, weftSum, comm, nullptr), weftInvalidArgument, "recvbuff");
  expectError(weftCommCount(comm, nullptr), weftInvalidArgument, "count");
  expectError(weftCommInitRank(nullptr, 1, weftUniqueId{}, 0), weftInvalidArgument, "comm");
  expectError(weftGetUniqueId(nullptr), weftInvalidArgument, "uniqueId");
  expectError(weftStreamCreate(nullptr), weftInvalidArgument, "stream");
  expectError(weftStreamDestroy(nullptr), weftInvalidArgument, "stream");
  expectError(weftGetVersion(nullptr), weftInvalidArgument, "version");
}

TEST_F(OneRank, UnknownTypeOpRootPeer) {
  float x = 1;
  expectError(weftAllReduce(&x, &x, 1, (weftDataType_t)42, weftSum, comm, nullptr), weftInvalidArgument,
              "datatype");
  expectError(weftAllReduce(&x, &x, 1, weftFloat32, (weftRedOp_t)9, comm, nullptr), weftInvalidArgument, "op");
  expectError(weftReduce(&x, &x, 1, weftFloat32, weftSum, 1, comm, nullptr), weftInvalidArgument, "root");
  expectError(weftBroadcast(&x, &x, 1, weftFloat32, -1, comm, nullptr), weftInvalidArgument, "root");
  expectError(weftSend(&x, 1, weftFloat32, 3, comm, nullptr), weftInvalidArgument, "peer");
  expectError(weftRecv(&x, 1, weftFloat32, -2, comm, nullptr), weftInvalidArgument, "peer");
}

TEST_F(OneRank, OverflowingCount) {
  float x = 1;
  expectError(weftAllReduce(&x, &x, SIZE_MAX / 2, weftFloat32, weftSum, comm, nullptr), weftInvalidArgument,
              "overflows");
  expectError(weftAllGather(&x, &x, SIZE_MAX / 4, weftFloat64, comm, nullptr), weftInvalidArgument, "overflows");
}

// Overlap outside weft.h's in-place layouts is refused before anything is written; in place and
// adjacent buffers run.
TEST_F(OneRank, OverlappingBuffersAreRefusedUnlessInPlace) {
  std::vector<int32_t> buffer = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<int32_t> before = buffer;
  int32_t* b = buffer.data();
  expectError(weftAllReduce(b, b + 1, 4, weftInt32, weftSum, comm, nullptr), weftInvalidArgument, "overlap");
  expectError(weftAllReduce(b + 3, b, 4, weftInt32, weftSum, comm, nullptr), weftInvalidArgument, "overlap");
  expectError(weftBroadcast(b, b + 2, 4, weftInt32, 0, comm, nullptr), weftInvalidArgument, "overlap");
  expectError(weftReduce(b + 1, b, 4, weftInt32, weftMax, 0, comm, nullptr), weftInvalidArgument, "overlap");
  expectError(weftAllGather(b + 1, b, 4, weftInt32, comm, nullptr), weftInvalidArgument, "rank * sendcount");
  expectError(weftReduceScatter(b, b + 1, 4, weftInt32, weftSum, comm, nullptr), weftInvalidArgument,
              "rank * recvcount");
  expectError(weftAllToAll(b, b + 1, 4, weftInt32, comm, nullptr), weftInvalidArgument, "overlap");
  EXPECT_EQ(buffer, before);

  EXPECT_EQ(weftAllReduce(b, b + 4, 4, weftInt32, weftSum, comm, nullptr), weftSuccess) << lastError();
  EXPECT_EQ(buffer, (std::vector<int32_t>{1, 2, 3, 4, 1, 2, 3, 4}));
  buffer = {1, 2, 3, 4, 50, 60, 70, 80};
  EXPECT_EQ(weftAllGather(b + 4, b, 4, weftInt32, comm, nullptr), weftSuccess) << lastError();
  EXPECT_EQ(buffer, (std::vector<int32_t>{50, 60, 70, 80, 50, 60, 70, 80}));
  buffer = before;
  EXPECT_EQ(weftAllToAll(b, b, 4, weftInt32, comm, nullptr), weftSuccess) << lastError();
  EXPECT_EQ(weftReduceScatter(b, b, 4, weftInt32, weftSum, comm, nullptr), weftSuccess) << lastError();
  EXPECT_EQ(buffer, before);
}

TEST_F(OneRank, ZeroCountAllowsNullBuffers) {
  EXPECT_EQ(weftAllReduce(nullptr, nullptr, 0, weftFloat32, weftSum, comm, nullptr), weftSuccess) << lastError();
  EXPECT_EQ(weftAllGather(nullptr, nullptr, 0, weftInt8, comm, nullptr), weftSuccess) << lastError();
  EXPECT_EQ(weftBarrier(comm, nullptr), weftSuccess) << lastError();
}

TEST_F(OneRank, CollectivesCopyOnOneRank) {
  std::vector<int32_t> in = {1, -2, 7}, out(3, 0);
  ASSERT_EQ(weftAllReduce(in.data(), out.data(), 3, weftInt32, weftSum, comm, nullptr), weftSuccess);
  EXPECT_EQ(out, in);
  std::vector<double> d = {3.0, 5.0}, avg(2, 0);
  ASSERT_EQ(weftAllReduce(d.data(), avg.data(), 2, weftFloat64, weftAvg, comm, nullptr), weftSuccess);
  EXPECT_EQ(avg, d);
  std::fill(out.begin(), out.end(), 0);
  ASSERT_EQ(weftAllToAll(in.data(), out.data(), 3, weftInt32, comm, nullptr), weftSuccess);
  EXPECT_EQ(out, in);
}

TEST_F(OneRank, SendRecvToSelfInsideAGroup) {
  std::vector<uint8_t> a = {1, 2, 3}, b(3, 0);
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  ASSERT_EQ(weftRecv(b.data(), 3, weftUint8, 0, comm, nullptr), weftSuccess);
  ASSERT_EQ(weftSend(a.data(), 3, weftUint8, 0, comm, nullptr), weftSuccess);
  ASSERT_EQ(weftGroupEnd(), weftSuccess) << lastError();
  EXPECT_EQ(a, b);
}

TEST_F(OneRank, RecvFromSelfWithoutSendFailsInsteadOfHanging) {
  uint8_t b = 0;
  expectError(weftRecv(&b, 1, weftUint8, 0, comm, nullptr), weftInvalidUsage, "itself");
}

TEST_F(OneRank, StreamRunsQueuedWork) {
  weftStream_t stream = nullptr;
  ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
  std::vector<float> in(1000, 2.5f), out(1000, 0.0f);
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(weftAllReduce(in.data(), out.data(), 1000, weftFloat32, weftMax, comm, stream), weftSuccess);
  EXPECT_EQ(weftStreamSynchronize(stream), weftSuccess) << lastError();
  EXPECT_EQ(weftStreamQuery(stream), weftSuccess);
  EXPECT_EQ(out, in);
  EXPECT_EQ(weftStreamDestroy(stream), weftSuccess);
}

// Fusion's early buckets and plans on one rank, through the public ABI only, so that the threads involved
// (the per-thread background stream of early NULL-stream buckets, a created stream) can be run under
// ThreadSanitizer without MPI.
unsigned long long launchedSoFar(weftComm_t comm) {
  weftCommStats_t stats = WEFT_COMM_STATS_INITIALIZER;
  EXPECT_EQ(weftCommGetStats(comm, &stats), weftSuccess) << lastError();
  return stats.collectivesLaunched;
}

TEST_F(OneRank, FullBucketsGoBeforeTheGroupEnds) {
  constexpr size_t kCount = (256 << 10) / sizeof(float);  // four fill a 1 MiB bucket
  weftFusionConfig_t config = WEFT_FUSION_CONFIG_INITIALIZER;
  config.mode = weftFusionSize;
  config.thresholdBytes = size_t{1} << 20;
  ASSERT_EQ(weftCommSetFusion(comm, weftCollAllReduce, &config), weftSuccess) << lastError();
  weftStream_t stream = nullptr;
  ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
  for (weftStream_t on : {static_cast<weftStream_t>(nullptr), stream}) {
    std::vector<std::vector<float>> in(8, std::vector<float>(kCount)), out(8, std::vector<float>(kCount, -1.0f));
    for (size_t i = 0; i < in.size(); ++i) {
      for (size_t e = 0; e < kCount; ++e) in[i][e] = static_cast<float>(i * 1000 + e % 977);
    }
    const unsigned long long before = launchedSoFar(comm);
    ASSERT_EQ(weftGroupStart(), weftSuccess);
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(weftAllReduce(in[i].data(), out[i].data(), kCount, weftFloat32, weftSum, comm, on), weftSuccess)
          << lastError();
      if (i == 3) {
        EXPECT_EQ(launchedSoFar(comm) - before, 1u) << "the full bucket did not go";
      }
    }
    ASSERT_EQ(weftGroupEnd(), weftSuccess) << lastError();
    if (on != nullptr) {
      ASSERT_EQ(weftStreamSynchronize(on), weftSuccess) << lastError();
    }
    EXPECT_EQ(launchedSoFar(comm) - before, 2u);
    for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], in[i]) << "call " << i;
  }
  EXPECT_EQ(weftStreamDestroy(stream), weftSuccess);
}

TEST_F(OneRank, PlanLaunchesOnTheBuffersCurrentContents) {
  std::vector<std::vector<int>> in(5, std::vector<int>(100)), out(5, std::vector<int>(100));
  weftPlan_t plan = nullptr;
  ASSERT_EQ(weftPlanBegin(comm), weftSuccess) << lastError();
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(weftAllReduce(in[i].data(), out[i].data(), 100, weftInt32, weftSum, comm, nullptr), weftSuccess);
  }
  ASSERT_EQ(weftPlanEnd(comm, &plan), weftSuccess) << lastError();
  weftStream_t stream = nullptr;
  ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
  for (int launch = 0; launch < 3; ++launch) {
    for (size_t i = 0; i < in.size(); ++i)
      std::fill(in[i].begin(), in[i].end(), launch * 10 + static_cast<int>(i));
    ASSERT_EQ(weftPlanLaunch(plan, launch % 2 ? stream : nullptr), weftSuccess) << lastError();
    ASSERT_EQ(weftStreamSynchronize(stream), weftSuccess);
    for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], in[i]) << "launch " << launch << " call " << i;
  }
  EXPECT_EQ(weftPlanDestroy(plan), weftSuccess);
  EXPECT_EQ(weftStreamDestroy(stream), weftSuccess);
}

TEST_F(OneRank, SplitWithNoColorGivesNull) {
  weftComm_t sub = reinterpret_cast<weftComm_t>(0x1);
  ASSERT_EQ(weftCommSplit(comm, WEFT_SPLIT_NOCOLOR, 0, &sub), weftSuccess) << lastError();
  EXPECT_EQ(sub, nullptr);
  ASSERT_EQ(weftCommSplit(comm, 3, 0, &sub), weftSuccess) << lastError();
  ASSERT_NE(sub, nullptr);
  int n = 0;
  EXPECT_EQ(weftCommCount(sub, &n), weftSuccess);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(weftCommDestroy(sub), weftSuccess);
  expectError(weftCommSplit(comm, -5, 0, &sub), weftInvalidArgument, "color");
}

TEST(Api, InitChecksItsArguments) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  weftComm_t comm = nullptr;
  EXPECT_EQ(weftCommInitRank(&comm, 0, id, 0), weftInvalidArgument);
  EXPECT_NE(lastError().find("nranks"), std::string::npos) << lastError();
  EXPECT_EQ(weftCommInitRank(&comm, 2, id, 2), weftInvalidArgument);
  EXPECT_NE(lastError().find("rank 2"), std::string::npos) << lastError();
  weftUniqueId garbage;
  memset(&garbage, 0x5a, sizeof(garbage));
  EXPECT_EQ(weftCommInitRank(&comm, 1, garbage, 0), weftInvalidArgument);
  EXPECT_NE(lastError().find("magic"), std::string::npos) << lastError();
  EXPECT_EQ(comm, nullptr);
}

TEST(Api, BadWeftAlgoFailsInit) {
  setenv("WEFT_ALGO", "allreduce:nonsense", 1);
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  weftComm_t comm = nullptr;
  EXPECT_EQ(weftCommInitRank(&comm, 1, id, 0), weftInvalidArgument);
  EXPECT_NE(lastError().find("nonsense"), std::string::npos) << lastError();
  unsetenv("WEFT_ALGO");
}

TEST(Api, InitFromEnvNeedsRoot) {
  setenv("WEFT_RANK", "0", 1);
  setenv("WEFT_SIZE", "1", 1);
  unsetenv("WEFT_ROOT");
  weftComm_t comm = nullptr;
  EXPECT_EQ(weftCommInitFromEnv(&comm), weftInvalidArgument);
  EXPECT_NE(lastError().find("WEFT_ROOT"), std::string::npos) << lastError();
  setenv("WEFT_ROOT", "127.0.0.1:0", 1);
  ASSERT_EQ(weftCommInitFromEnv(&comm), weftInvalidArgument) << "port 0 cannot be reached by other ranks";
  unsetenv("WEFT_RANK");
  unsetenv("WEFT_SIZE");
  unsetenv("WEFT_ROOT");
}

TEST(Api, GroupEndWithoutStart) {
  EXPECT_EQ(weftGroupEnd(), weftInvalidUsage);
  EXPECT_NE(lastError().find("weftGroupStart"), std::string::npos);
}

// The last error message belongs to the thread that made the failing call; a later call that succeeds
// clears it, and a thread that never failed reads an empty message (its state is made on first failure and
// freed when the thread exits, which the sanitizer run checks).
TEST(Api, LastErrorIsPerThreadAndClearedBySuccess) {
  EXPECT_EQ(weftGetVersion(nullptr), weftInvalidArgument);
  const std::string mine = lastError();
  EXPECT_NE(mine.find("version"), std::string::npos) << mine;
  std::string othersBefore, othersAfter;
  std::thread other([&] {
    othersBefore = lastError();
    EXPECT_EQ(weftStreamCreate(nullptr), weftInvalidArgument);
    othersAfter = lastError();
  });
  other.join();
  EXPECT_EQ(othersBefore, "");
  EXPECT_NE(othersAfter.find("stream"), std::string::npos) << othersAfter;
  EXPECT_EQ(lastError(), mine);
  int version = 0;
  EXPECT_EQ(weftGetVersion(&version), weftSuccess);
  EXPECT_EQ(lastError(), "");
}

TEST(Api, ErrorStringsAndVersion) {
  for (int r = weftSuccess; r <= weftNotSupported; ++r) EXPECT_NE(weftGetErrorString((weftResult_t)r), nullptr);
  int version = 0;
  EXPECT_EQ(weftGetVersion(&version), weftSuccess);
  EXPECT_EQ(version, WEFT_VERSION_CODE);
  size_t bytes = 0;
  EXPECT_EQ(weftDataTypeSize(weftBfloat16, &bytes), weftSuccess);
  EXPECT_EQ(bytes, 2u);
}

// weftMemAlloc/weftMemFree through whichever plugin offers shared memory (or none): zeroed, page-aligned
// memory, usable by a collective; bad arguments and foreign pointers refused with a message.
TEST_F(OneRank, MemAllocGivesUsableMemoryAndRefusesBadPointers) {
  void* p = nullptr;
  expectError(weftMemAlloc(nullptr, 64), weftInvalidArgument, "ptr");
  expectError(weftMemAlloc(&p, 0), weftInvalidArgument, "size");
  EXPECT_EQ(p, nullptr);
  const size_t count = 300000;
  void* send = nullptr;
  void* recv = nullptr;
  ASSERT_EQ(weftMemAlloc(&send, count * sizeof(float)), weftSuccess) << lastError();
  ASSERT_EQ(weftMemAlloc(&recv, count * sizeof(float)), weftSuccess) << lastError();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(send) % 4096, 0u);
  EXPECT_EQ(static_cast<const unsigned char*>(recv)[count * sizeof(float) - 1], 0);
  auto* in = static_cast<float*>(send);
  for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>(i % 1000) * 0.5f;
  ASSERT_EQ(weftAllReduce(send, recv, count, weftFloat32, weftSum, comm, nullptr), weftSuccess) << lastError();
  EXPECT_EQ(memcmp(send, recv, count * sizeof(float)), 0);
  int onStack = 0;
  expectError(weftMemFree(&onStack), weftInvalidArgument, "weftMemAlloc");
  EXPECT_EQ(weftMemFree(nullptr), weftSuccess);
  EXPECT_EQ(weftMemFree(send), weftSuccess) << lastError();
  EXPECT_EQ(weftMemFree(recv), weftSuccess) << lastError();
  expectError(weftMemFree(send), weftInvalidArgument, "freed already");
}

// Run by CTest with WEFT_PLUGINS naming a plugin that cannot load and WEFT_TEST_EXPECT the reason.
TEST(RequestedPlugin, FailsWithReason) {
  const char* expect = getenv("WEFT_TEST_EXPECT");
  if (expect == nullptr) GTEST_SKIP() << "run through CTest (requested_plugin_*), which sets WEFT_TEST_EXPECT";
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  weftComm_t comm = nullptr;
  EXPECT_EQ(weftCommInitRank(&comm, 1, id, 0), weftPluginError);
  EXPECT_NE(lastError().find(expect), std::string::npos) << lastError();
  EXPECT_NE(lastError().find(getenv("WEFT_PLUGINS")), std::string::npos) << lastError();
}

}  // namespace
