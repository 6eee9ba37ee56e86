// Plan classification (fusion/plan_compile.h): subgraph reuse and the streams a plan needs, without ranks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "core/comm/comm.h"
#include "core/common/error.h"
#include "fusion/plan_compile.h"

namespace weft {
namespace {

std::vector<Op> allReduces(weftComm* comm, int n, weftDataType_t type = weftFloat32, size_t count = 256) {
  return std::vector<Op>(
      n, Op{OpKind::AllReduce, comm, CollArgs{nullptr, nullptr, count, type, weftSum, 0}, 1, nullptr});
}

PlanLimits limits(int reuse, int capacity = 3, int streams = 64) { return PlanLimits{capacity, streams, reuse}; }

TEST(PlanCompile, ThirtyIdenticalCallsShareOneSubgraph) {
  weftComm comm;
  PlanClassification c = classifyPlan(allReduces(&comm, 30), limits(1000));
  EXPECT_EQ(c.numOps, 30);
  EXPECT_EQ(c.streamsWithoutReuse, 10);
  EXPECT_EQ(c.streamsUsed, 1);
  EXPECT_EQ(c.numSubgraphs, 1);
  EXPECT_EQ(c.opsReused, 30);
}

TEST(PlanCompile, AGroupThatWouldPassTheLimitIsSkippedWhole) {
  weftComm comm;
  std::vector<Op> calls = allReduces(&comm, 30);
  std::vector<Op> ints = allReduces(&comm, 30, weftInt32);
  calls.insert(calls.end(), ints.begin(), ints.end());
  std::vector<Op> few = allReduces(&comm, 5, weftFloat64);  // a later, smaller group still fits
  calls.insert(calls.end(), few.begin(), few.end());
  PlanClassification c = classifyPlan(calls, limits(40));
  EXPECT_EQ(c.opsReused, 35);
  EXPECT_EQ(c.numSubgraphs, 2);
  EXPECT_EQ(c.streamsUsed, 2 + 10);
  c = classifyPlan(std::vector<Op>(calls.begin(), calls.begin() + 60), limits(40));
  EXPECT_EQ(c.opsReused, 30);
  EXPECT_EQ(c.streamsUsed, 11);
}

TEST(PlanCompile, GroupsThatFitOneStreamAreNotReused) {
  weftComm comm;
  std::vector<Op> calls = allReduces(&comm, 3);
  for (size_t count : {1, 2, 3}) calls.push_back(allReduces(&comm, 1, weftFloat32, count).front());
  PlanClassification c = classifyPlan(calls, limits(1000));
  EXPECT_EQ(c.numSubgraphs, 0);
  EXPECT_EQ(c.streamsUsed, 2);
  EXPECT_EQ(classifyPlan(allReduces(&comm, 30), limits(0)).streamsUsed, 10);  // reuse off
}

TEST(PlanCompile, KeysTellRootsCommunicatorsAndFusionIdsApart) {
  weftComm a;
  weftComm b;
  std::vector<Op> calls = allReduces(&a, 4);
  std::vector<Op> other = allReduces(&b, 4);
  calls.insert(calls.end(), other.begin(), other.end());
  calls[1].fusionId = 2;
  PlanClassification c = classifyPlan(calls, limits(1000));
  EXPECT_EQ(c.numSubgraphs, 1);  // b's four; a's are three plus one
  EXPECT_EQ(c.opsReused, 4);
}

TEST(PlanCompile, LimitsComeFromTheEnvironment) {
  setenv("WEFT_SUBGRAPH_REUSE", "0", 1);
  setenv("WEFT_STREAM_CAPACITY", "5", 1);
  setenv("WEFT_MAX_STREAMS", "7", 1);
  PlanLimits l = planLimitsFromEnvironment();
  EXPECT_EQ(l.reuseLimit, 0);
  EXPECT_EQ(l.streamCapacity, 5);
  EXPECT_EQ(l.maxStreams, 7);
  setenv("WEFT_SUBGRAPH_REUSE", "-1", 1);
  EXPECT_EQ(planLimitsFromEnvironment().reuseLimit, 1000);
  for (const char* bad : {"abc", "-2", "1x"}) {
    setenv("WEFT_SUBGRAPH_REUSE", bad, 1);
    EXPECT_THROW(planLimitsFromEnvironment(), Error) << bad;
  }
  unsetenv("WEFT_SUBGRAPH_REUSE");
  setenv("WEFT_STREAM_CAPACITY", "0", 1);
  EXPECT_THROW(planLimitsFromEnvironment(), Error);
  unsetenv("WEFT_STREAM_CAPACITY");
  unsetenv("WEFT_MAX_STREAMS");
  EXPECT_EQ(planLimitsFromEnvironment().reuseLimit, 1000);
}

}  // namespace
}  // namespace weft
