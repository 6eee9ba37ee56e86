// The fusion planner (fusion/fusion_planner.h) on one rank, without running anything: which calls of a
// group become one collective, for every mode, and that buffer dependencies keep calls apart.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/comm/comm.h"
#include "fusion/fusion_planner.h"

namespace weft {
namespace {

using Plan = std::vector<std::vector<size_t>>;
Plan asPlan(std::span<const std::vector<size_t>> launches) { return {launches.begin(), launches.end()}; }

// A group under construction: one communicator of `nranks`, one setting per collective.
class Group {
 public:
  explicit Group(int nranks = 4) { comm_.nranks = nranks; }

  Group& set(size_t slot, FusionSetting s) {
    settings_[slot] = std::move(s);
    return *this;
  }
  // Adds a call with fresh buffers of its own. The planner never touches memory, so they are addresses
  // only, handed out apart from each other.
  Group& add(OpKind kind, size_t count, int fusionId = 1, weftDataType_t type = weftFloat32,
             weftRedOp_t op = weftSum, weftStream* stream = nullptr) {
    const size_t bytes = count * 8 * static_cast<size_t>(comm_.nranks) + 64;
    const uintptr_t in = nextAddress_;
    const uintptr_t out = in + bytes;
    nextAddress_ = out + bytes;
    // NOLINTNEXTLINE(performance-no-int-to-ptr): addresses only, never dereferenced
    return addOn(kind, reinterpret_cast<const void*>(in), reinterpret_cast<void*>(out), count, fusionId, type, op,
                 stream);
  }
  Group& addOn(OpKind kind, const void* send, void* recv, size_t count, int fusionId = 1,
               weftDataType_t type = weftFloat32, weftRedOp_t op = weftSum, weftStream* stream = nullptr) {
    Op o{kind, &comm_, CollArgs{send, recv, count, type, op, 0}, fusionId, nullptr};
    held_.push_back({o, stream});
    return *this;
  }
  const HeldOp& last() const { return held_.back(); }
  const std::vector<HeldOp>& held() const { return held_; }
  FusionSettingOf settingOf() const {
    return [this](const weftComm*, size_t slot) { return settings_[slot]; };
  }
  Plan plan() const { return planFusion(held_, settingOf()); }
  std::vector<HeldOp> fused() const {
    FusionPlanner planner(settingOf());
    for (const HeldOp& h : held_) planner.add(h);
    std::vector<HeldOp> launches;
    for (const auto& members : planner.takeAll()) launches.push_back(planner.launchOf(members));
    return launches;
  }

 private:
  weftComm comm_;
  std::array<FusionSetting, 3> settings_;  // default: auto
  std::vector<HeldOp> held_;
  uintptr_t nextAddress_ = uintptr_t{1} << 40;
};

FusionSetting mode(weftFusionMode_t m, size_t threshold = kAutoFusionBytes, std::vector<int> split = {}) {
  return FusionSetting{m, threshold, std::move(split)};
}

TEST(FusionPlanner, IndexListSplitsAllReducesByPosition) {
  Group g;
  g.set(0, mode(weftFusionIndex, 0, {20, 35}));
  for (int i = 0; i < 40; ++i) g.add(OpKind::AllReduce, 16);
  Plan plan = g.plan();
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].size(), 20u);
  EXPECT_EQ(plan[1].size(), 15u);
  EXPECT_EQ(plan[2].size(), 5u);
  EXPECT_EQ(plan[1].front(), 20u);
}

TEST(FusionPlanner, SizeThresholdPacksUntilTheNextWouldPassIt) {
  Group g;
  g.set(0, mode(weftFusionSize, 1 << 20));
  for (int i = 0; i < 10; ++i) g.add(OpKind::AllReduce, (256 << 10) / 4);
  Plan plan = g.plan();
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].size(), 4u);
  EXPECT_EQ(plan[2].size(), 2u);
}

TEST(FusionPlanner, AnOperationLargerThanTheThresholdGoesAlone) {
  Group g;
  g.set(0, mode(weftFusionSize, 1 << 20));
  g.add(OpKind::AllReduce, 1000).add(OpKind::AllReduce, (2 << 20) / 4).add(OpKind::AllReduce, 1000);
  Plan plan = g.plan();
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0], (std::vector<size_t>{0, 2}));
  EXPECT_EQ(plan[1], (std::vector<size_t>{1}));
}

TEST(FusionPlanner, FusionIdsKeepBucketsApartAndZeroNeverFuses) {
  Group g;
  for (int id : {1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0}) g.add(OpKind::AllReduce, 64, id);
  EXPECT_EQ(g.plan().size(), 6u);
}

TEST(FusionPlanner, AutoFusesAThousandSmallCallsIntoOne) {
  Group g;
  for (int i = 0; i < 1000; ++i) g.add(OpKind::AllReduce, 1024);
  EXPECT_EQ(g.plan().size(), 1u);
}

TEST(FusionPlanner, OffLaunchesEveryCall) {
  Group g;
  g.set(0, mode(weftFusionOff));
  for (int i = 0; i < 50; ++i) g.add(OpKind::AllReduce, 8);
  EXPECT_EQ(g.plan().size(), 50u);
}

TEST(FusionPlanner, IdModeIgnoresSizes) {
  Group g;
  g.set(0, mode(weftFusionId));
  g.add(OpKind::AllReduce, 100 << 20).add(OpKind::AllReduce, 8, 2).add(OpKind::AllReduce, 100 << 20);
  Plan plan = g.plan();
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0], (std::vector<size_t>{0, 2}));
}

TEST(FusionPlanner, OnlyCompatibleCallsFuse) {
  weftStream* other = reinterpret_cast<weftStream*>(0x1000);
  Group g;
  g.add(OpKind::AllReduce, 8)
      .add(OpKind::AllReduce, 8, 1, weftFloat64)
      .add(OpKind::AllReduce, 8, 1, weftFloat32, weftMax)
      .add(OpKind::AllReduce, 8, 1, weftFloat32, weftSum, other)
      .add(OpKind::AllGather, 8)
      .add(OpKind::ReduceScatter, 8)
      .add(OpKind::Broadcast, 8)
      .add(OpKind::AllReduce, 8)
      .add(OpKind::AllGather, 8)
      .add(OpKind::ReduceScatter, 8)
      .add(OpKind::Broadcast, 8);
  Plan plan = g.plan();
  ASSERT_EQ(plan.size(), 8u);
  EXPECT_EQ(plan[0], (std::vector<size_t>{0, 7}));
  EXPECT_EQ(plan[4], (std::vector<size_t>{4, 8}));
  EXPECT_EQ(plan[5], (std::vector<size_t>{5, 9}));
}

TEST(FusionPlanner, ReduceScatterCountsEveryRanksInput) {
  Group g(4);
  g.set(2, mode(weftFusionSize, 4096));
  for (int i = 0; i < 4; ++i) g.add(OpKind::ReduceScatter, 256);  // 4 ranks x 256 floats = 4 KiB each
  EXPECT_EQ(g.plan().size(), 4u);
}

TEST(FusionPlanner, ACallReadingAnEarlierCallsOutputIsNotFusedWithIt) {
  std::vector<float> a(64), b(64), c(64);
  Group g;
  g.addOn(OpKind::AllReduce, a.data(), b.data(), 64).addOn(OpKind::AllReduce, b.data(), c.data(), 64);
  EXPECT_EQ(g.plan().size(), 2u);
}

TEST(FusionPlanner, ACallTouchingWhatAnInterveningCallWritesIsNotMovedAcrossIt) {
  std::vector<float> a(64), b(64), x(64), y(64);
  Group g;
  // AllReduce a; Broadcast into y; AllReduce y: the second AllReduce must see the Broadcast's result.
  g.addOn(OpKind::AllReduce, a.data(), a.data(), 64)
      .addOn(OpKind::Broadcast, x.data(), y.data(), 64)
      .addOn(OpKind::AllReduce, y.data(), y.data(), 64)
      .addOn(OpKind::AllReduce, b.data(), b.data(), 64);
  Plan plan = g.plan();
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0], (std::vector<size_t>{0}));
  EXPECT_EQ(plan[2], (std::vector<size_t>{2, 3}));
}

TEST(FusionPlanner, InPlaceCallsOnDisjointBuffersFuse) {
  std::vector<float> block(1024);
  Group g;
  for (size_t i = 0; i < 8; ++i) g.addOn(OpKind::AllReduce, block.data() + i * 128, block.data() + i * 128, 128);
  EXPECT_EQ(g.plan().size(), 1u);
}

TEST(FusionPlanner, FusedOperationCarriesItsMembersAndTotal) {
  Group g;
  g.add(OpKind::AllGather, 3).add(OpKind::AllGather, 5).add(OpKind::Barrier, 0);
  std::vector<HeldOp> launches = g.fused();
  ASSERT_EQ(launches.size(), 2u);
  ASSERT_TRUE(launches[0].op.members);
  EXPECT_EQ(launches[0].op.members->size(), 2u);
  EXPECT_EQ(launches[0].op.args.count, 8u);
  EXPECT_FALSE(launches[1].op.members);
}

// Early launches: what a planner fed call by call lets go before the group's end.
class Incremental {
 public:
  explicit Incremental(FusionSetting allReduce, int nranks = 4)
      : group_(nranks),
        planner_([allReduce](const weftComm*, size_t slot) { return slot == 0 ? allReduce : FusionSetting{}; }) {}
  // Adds one call like Group::add and returns the launches now ready.
  Plan add(OpKind kind, size_t count, int fusionId = 1) {
    group_.add(kind, count, fusionId);
    planner_.add(group_.last());
    return asPlan(planner_.takeReady());
  }
  Plan rest() { return asPlan(planner_.takeAll()); }

 private:
  Group group_;
  FusionPlanner planner_;
};

TEST(FusionPlannerEarly, AFullBucketGoesAtOnce) {
  Incremental g(mode(weftFusionSize, 1 << 20));
  const size_t quarter = (256 << 10) / 4;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(g.add(OpKind::AllReduce, quarter).empty());
  EXPECT_EQ(g.add(OpKind::AllReduce, quarter), (Plan{{0, 1, 2, 3}}));  // exactly the threshold: full
  EXPECT_TRUE(g.add(OpKind::AllReduce, quarter).empty());
  EXPECT_TRUE(g.add(OpKind::AllReduce, quarter).empty());
  EXPECT_EQ(g.add(OpKind::AllReduce, 3 * quarter), (Plan{{4, 5}}));  // would pass it: the bucket closes
  EXPECT_EQ(g.rest(), (Plan{{6}}));
}

TEST(FusionPlannerEarly, AnIndexSegmentGoesWhenTheNextBegins) {
  Incremental g(mode(weftFusionIndex, 0, {2}));
  EXPECT_TRUE(g.add(OpKind::AllReduce, 8).empty());
  EXPECT_TRUE(g.add(OpKind::AllReduce, 8).empty());
  EXPECT_EQ(g.add(OpKind::AllReduce, 8), (Plan{{0, 1}}));
  EXPECT_EQ(g.rest(), (Plan{{2}}));
}

TEST(FusionPlannerEarly, NothingPassesACallThatDoesNotFuse) {
  Incremental g(mode(weftFusionSize, 64));
  EXPECT_TRUE(g.add(OpKind::Send, 8).empty());
  EXPECT_TRUE(g.add(OpKind::AllReduce, 16).empty());  // 64 bytes: full, but behind the Send
  EXPECT_EQ(g.rest(), (Plan{{0}, {1}}));
}

TEST(FusionPlannerEarly, IdBucketsWaitForTheGroupsEnd) {
  Incremental g(mode(weftFusionId));
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(g.add(OpKind::AllReduce, 1 << 20).empty());
  EXPECT_EQ(g.rest().size(), 1u);
}

// weftGroupEnd keeps one planner per thread and resets it between groups, keeping its memory.
TEST(FusionPlannerReuse, AResetPlannerPlansTheNextGroupAsAFreshOneWould) {
  std::vector<float> a(64), b(64), x(64), y(64);
  Group first;  // one bucket of ten
  for (int i = 0; i < 10; ++i) first.add(OpKind::AllReduce, (256 << 10) / 8);
  Group second;  // buffer dependencies, and an AllGather bucket beside the AllReduce ones
  second.addOn(OpKind::AllReduce, a.data(), a.data(), 64)
      .addOn(OpKind::Broadcast, x.data(), y.data(), 64)
      .add(OpKind::AllGather, 3)
      .addOn(OpKind::AllReduce, y.data(), y.data(), 64)
      .addOn(OpKind::AllReduce, b.data(), b.data(), 64)
      .add(OpKind::AllGather, 5);
  FusionPlanner planner(second.settingOf());
  for (const HeldOp& h : first.held()) planner.add(h);
  EXPECT_EQ(asPlan(planner.takeAll()), (Plan{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}));
  planner.reset();
  for (const HeldOp& h : second.held()) planner.add(h);
  EXPECT_EQ(asPlan(planner.takeAll()), (Plan{{0}, {1}, {2, 5}, {3, 4}}));
  EXPECT_EQ(second.plan(), (Plan{{0}, {1}, {2, 5}, {3, 4}}));  // a fresh planner's
}

TEST(FusionPlannerReuse, AFusedOperationsMemberListIsReusedOnlyOnceNobodyHoldsIt) {
  Group g;
  for (int i = 0; i < 4; ++i) g.add(OpKind::AllReduce, 100 + i);
  FusionPlanner planner(g.settingOf());
  auto launchGroup = [&] {
    planner.reset();
    for (const HeldOp& h : g.held()) planner.add(h);
    std::span<const std::vector<size_t>> launches = planner.takeAll();
    EXPECT_EQ(launches.size(), 1u);
    return planner.launchOf(launches.front());
  };
  const std::vector<Op>* dropped = launchGroup().op.members.get();
  HeldOp held = launchGroup();
  EXPECT_EQ(held.op.members.get(), dropped);  // the first launch's list, free again
  HeldOp next = launchGroup();
  ASSERT_NE(next.op.members.get(), held.op.members.get());  // still held: a new list
  for (const HeldOp* launch : {&held, &next}) {
    ASSERT_EQ(launch->op.members->size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ((*launch->op.members)[i].args.count, 100 + i);
  }
}

}  // namespace
}  // namespace weft
