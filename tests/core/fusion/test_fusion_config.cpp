// WEFT_FUSION / WEFT_FUSION_INDEX parsing and weftFusionConfig_t checks.
#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"
#include "fusion/fusion_config.h"

namespace weft {
namespace {

void expectInvalid(const std::string& fusion, const std::string& index, const std::string& says) {
  try {
    parseFusionEnvironment(fusion, index);
    FAIL() << "accepted WEFT_FUSION='" << fusion << "' WEFT_FUSION_INDEX='" << index << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), weftInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(FusionEnvironment, DefaultsToAuto) {
  for (const FusionSetting& s : parseFusionEnvironment("", "")) {
    EXPECT_EQ(s.mode, weftFusionAuto);
    EXPECT_EQ(s.thresholdBytes, kAutoFusionBytes);
  }
}

TEST(FusionEnvironment, ReadsEveryModeWithSizesInMegabytes) {
  auto s = parseFusionEnvironment("allreduce:size:32;allgather:off;reducescatter:id", "");
  EXPECT_EQ(s[0].mode, weftFusionSize);
  EXPECT_EQ(s[0].thresholdBytes, size_t{32} << 20);
  EXPECT_EQ(s[1].mode, weftFusionOff);
  EXPECT_EQ(s[2].mode, weftFusionId);
  EXPECT_EQ(parseFusionEnvironment("allgather:size:0.5", "")[1].thresholdBytes, size_t{512} << 10);
}

TEST(FusionEnvironment, IndexListPutsAllReduceInIndexMode) {
  auto s = parseFusionEnvironment("", "20,35");
  EXPECT_EQ(s[0].mode, weftFusionIndex);
  EXPECT_EQ(s[0].splitIndices, (std::vector<int>{20, 35}));
  EXPECT_EQ(parseFusionEnvironment("allreduce:index", "3")[0].splitIndices, (std::vector<int>{3}));
}

TEST(FusionEnvironment, RejectsBadSettingsNamingThem) {
  expectInvalid("allreduce:fast", "", "mode 'fast'");
  expectInvalid("broadcast:auto", "", "'broadcast:auto'");
  expectInvalid("allreduce:size", "", "positive number of MB");
  expectInvalid("allreduce:size:-1", "", "positive number of MB");
  expectInvalid("allreduce:size:1e-9", "", "less than a byte");  // found by tests/fuzz: a threshold of 0
  expectInvalid("allreduce:auto:3", "", "extra fields");
  expectInvalid("allgather:index", "1", "mode 'index'");
  expectInvalid("allreduce:index", "", "needs WEFT_FUSION_INDEX");
  expectInvalid("", "35,20", "ascending");
  expectInvalid("", "1,x", "'x'");
  expectInvalid("allreduce:auto", "20", "another mode");
}

TEST(FusionConfig, CopiesAValidConfig) {
  const int split[] = {2, 5};
  weftFusionConfig_t c = WEFT_FUSION_CONFIG_INITIALIZER;
  c.mode = weftFusionIndex;
  c.splitIndices = split;
  c.numSplitIndices = 2;
  FusionSetting s = settingFromConfig(weftCollAllReduce, c);
  EXPECT_EQ(s.splitIndices, (std::vector<int>{2, 5}));
  c = WEFT_FUSION_CONFIG_INITIALIZER;
  c.mode = weftFusionSize;
  c.thresholdBytes = 1000;
  EXPECT_EQ(settingFromConfig(weftCollAllGather, c).thresholdBytes, 1000u);
}

TEST(FusionConfig, RejectsWhatIsWrong) {
  const int descending[] = {5, 2};
  weftFusionConfig_t c = WEFT_FUSION_CONFIG_INITIALIZER;
  c.magic = 0;
  EXPECT_THROW(settingFromConfig(weftCollAllReduce, c), Error);
  c = WEFT_FUSION_CONFIG_INITIALIZER;
  c.mode = weftFusionIndex;
  EXPECT_THROW(settingFromConfig(weftCollAllGather, c), Error);
  c.splitIndices = descending;
  c.numSplitIndices = 2;
  EXPECT_THROW(settingFromConfig(weftCollAllReduce, c), Error);
  c = WEFT_FUSION_CONFIG_INITIALIZER;
  c.mode = static_cast<weftFusionMode_t>(42);
  EXPECT_THROW(settingFromConfig(weftCollAllReduce, c), Error);
  c.mode = weftFusionSize;  // threshold 0
  EXPECT_THROW(settingFromConfig(weftCollAllReduce, c), Error);
}

}  // namespace
}  // namespace weft
