// A plan's layout on lanes (fusion/plan_program.h), without ranks: which stream each call gets, the lanes,
// the runs of independent calls, and the waits between lanes found from the calls' buffers.
#include <gtest/gtest.h>

#include <vector>

#include "core/comm/comm.h"
#include "core/comm/connections.h"
#include "fusion/plan_compile.h"
#include "fusion/plan_program.h"

namespace weft {
namespace {

struct Layout : ::testing::Test {
  Layout() { comm.nranks = 2; }

  Op allReduce(const float* in, float* out, size_t count = 64, weftRedOp_t op = weftSum) {
    return Op{OpKind::AllReduce, &comm, CollArgs{in, out, count, weftFloat32, op, 0}, 1, nullptr};
  }

  weftComm comm;
  std::vector<float> a = std::vector<float>(64), b = std::vector<float>(64), c = std::vector<float>(64),
                     d = std::vector<float>(64);
};

TEST_F(Layout, ReusedGroupsTakeTheFirstStreamsAndOthersFillTheNextByCapacity) {
  std::vector<Op> calls(5, allReduce(a.data(), b.data()));  // one key, 5 > capacity 3: reused
  for (size_t count : {1, 2, 3, 4}) calls.push_back(allReduce(a.data(), b.data(), count));
  const PlanClassification c = classifyPlan(calls, PlanLimits{3, 64, 1000});
  EXPECT_EQ(c.streamOf, (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1, 2}));
  EXPECT_EQ(c.streamsUsed, 3);
}

TEST_F(Layout, ConsecutiveIdenticalCallsOfALaneAreOneUnitAndTheirBuffers) {
  const std::vector<Op> launches = {allReduce(a.data(), b.data()), allReduce(c.data(), d.data())};
  const PlanProgram p = layOutPlan(launches, {0, 0});
  ASSERT_EQ(p.lanes.size(), 1u);
  ASSERT_EQ(p.lanes[0].size(), 1u);
  const PlanStep& step = p.lanes[0][0];
  EXPECT_FALSE(step.op.members);
  ASSERT_EQ(step.calls.size(), 2u);
  EXPECT_EQ(step.calls[1].sendbuff, c.data());
  EXPECT_EQ(step.calls[1].recvbuff, d.data());
}

TEST_F(Layout, IndependentCallsOfDifferentCountsRunTogetherAsMembers) {
  const std::vector<Op> launches = {allReduce(a.data(), b.data(), 64), allReduce(c.data(), d.data(), 32)};
  const PlanProgram p = layOutPlan(launches, {0, 0});
  ASSERT_EQ(p.lanes[0].size(), 1u);
  const PlanStep& step = p.lanes[0][0];
  EXPECT_TRUE(step.calls.empty());
  EXPECT_TRUE(step.op.independent);
  ASSERT_TRUE(step.op.members);
  EXPECT_EQ(step.op.members->size(), 2u);
}

TEST_F(Layout, ACallReadingAnEarlierOnesOutputStartsANewStep) {
  // b = allreduce(a); c = allreduce(b): the backend would stage b before the first wrote it.
  const std::vector<Op> launches = {allReduce(a.data(), b.data()), allReduce(b.data(), c.data())};
  const PlanProgram p = layOutPlan(launches, {0, 0});
  ASSERT_EQ(p.lanes[0].size(), 2u);
  EXPECT_TRUE(p.lanes[0][0].calls.empty());
  EXPECT_FALSE(p.lanes[0][0].op.independent);
}

TEST_F(Layout, ALaneWaitsForTheLatestConflictingStepOfAnother) {
  // Streams 0 and 1 take lanes 0 and 1. Step 2 (lane 1) reads b, which step 0 (lane 0) writes; step 3 (lane 0)
  // writes a, which steps 0 and 1 read (a wait for lane 1 only: lane 0 keeps its order). Steps 1 and 2 differ
  // in reduction op, so they do not run as one operation.
  const std::vector<Op> launches = {allReduce(a.data(), b.data()), allReduce(a.data(), c.data()),
                                    allReduce(b.data(), d.data(), 64, weftMax), allReduce(c.data(), a.data())};
  const PlanProgram p = layOutPlan(launches, {0, 1, 1, 0});
  ASSERT_EQ(p.lanes.size(), 2u);
  ASSERT_EQ(p.lanes[0].size(), 2u);
  ASSERT_EQ(p.lanes[1].size(), 2u);
  auto waitsOf = [&](uint32_t lane, uint32_t index) {
    const PlanStep& s = p.lanes[lane][index];
    return std::vector<PlanWait>(p.waits.begin() + s.waitsBegin, p.waits.begin() + s.waitsEnd);
  };
  EXPECT_TRUE(waitsOf(0, 0).empty());
  EXPECT_TRUE(waitsOf(1, 0).empty());  // reads a, as step 0 does: no conflict
  const std::vector<PlanWait> second = waitsOf(1, 1);
  ASSERT_EQ(second.size(), 1u);  // reads b written by lane 0's first step
  EXPECT_EQ(second[0].lane, 0u);
  EXPECT_EQ(second[0].steps, 1u);
  const std::vector<PlanWait> last = waitsOf(0, 1);  // reads c (lane 1's first writes it), writes a (read there)
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].lane, 1u);
  EXPECT_EQ(last[0].steps, 1u);
  EXPECT_EQ(p.order.size(), 4u);
}

TEST_F(Layout, StreamsBeyondTheLaneLimitShareLanes) {
  std::vector<Op> launches;
  std::vector<int> streams;
  for (int s = 0; s <= kMaxLanes; ++s) {
    launches.push_back(allReduce(a.data() + (s % 2), nullptr, 1));  // reads only: no waits
    streams.push_back(s);
  }
  const PlanProgram p = layOutPlan(launches, streams);
  ASSERT_EQ(p.lanes.size(), static_cast<size_t>(kMaxLanes));
  EXPECT_EQ(p.lanes[0].size(), 2u);  // streams 0 and kMaxLanes
  EXPECT_TRUE(p.waits.empty());
}

}  // namespace
}  // namespace weft
