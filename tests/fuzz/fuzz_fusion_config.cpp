// WEFT_FUSION and WEFT_FUSION_INDEX (fusion/fusion_config.cpp parseFusionEnvironment). The input is
// WEFT_FUSION, a newline, then WEFT_FUSION_INDEX. An accepted pair gives settings the API would accept too
// (settingFromConfig's rules: a size threshold above zero, index mode for AllReduce only, ascending
// non-negative indices), and printing the settings back parses to the same settings.
#include <cstdio>
#include <string>

#include "fusion/fusion_config.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using Settings = std::array<weft::FusionSetting, 3>;

const char* modeName(weftFusionMode_t mode) {
  switch (mode) {
    case weftFusionOff:
      return "off";
    case weftFusionAuto:
      return "auto";
    case weftFusionSize:
      return "size";
    case weftFusionIndex:
      return "index";
    case weftFusionId:
      return "id";
  }
  weft::fuzz::invariantFailed("a fusion mode out of range", __FILE__, __LINE__);
}

// Sizes print in MB with every digit: bytes < 2^50 divide by 2^20 exactly, so the text parses back exactly.
void print(const Settings& settings, std::string& fusion, std::string& index) {
  for (size_t slot = 0; slot < settings.size(); ++slot) {
    const weft::FusionSetting& s = settings[slot];
    fusion += std::string(weft::fusionCollName(slot)) + ":" + modeName(s.mode);
    if (s.mode == weftFusionSize) {
      char mb[64];
      std::snprintf(mb, sizeof(mb), ":%.17g", static_cast<double>(s.thresholdBytes) / (1 << 20));
      fusion += mb;
    }
    fusion += ";";
  }
  for (int i : settings[0].splitIndices) index += (index.empty() ? "" : ",") + std::to_string(i);
}

bool same(const weft::FusionSetting& a, const weft::FusionSetting& b) {
  if (a.mode != b.mode) return false;
  if (a.mode == weftFusionSize && a.thresholdBytes != b.thresholdBytes) return false;
  return a.mode != weftFusionIndex || a.splitIndices == b.splitIndices;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input = weft::fuzz::text(data, size);
  const size_t newline = input.find('\n');
  const std::string fusion = input.substr(0, newline);
  const std::string index = newline == std::string::npos ? "" : input.substr(newline + 1);
  Settings settings;
  if (!weft::fuzz::accepts(weftInvalidArgument, [&] { settings = weft::parseFusionEnvironment(fusion, index); }))
    return 0;
  for (size_t slot = 0; slot < settings.size(); ++slot) {
    const weft::FusionSetting& s = settings[slot];
    if (s.mode == weftFusionSize) FUZZ_CHECK(s.thresholdBytes > 0);
    if (s.mode == weftFusionIndex) {
      FUZZ_CHECK(slot == 0);
      FUZZ_CHECK(!s.splitIndices.empty());
      for (size_t i = 0; i < s.splitIndices.size(); ++i) {
        FUZZ_CHECK(s.splitIndices[i] >= 0);
        FUZZ_CHECK(i == 0 || s.splitIndices[i] > s.splitIndices[i - 1]);
      }
    }
  }
  std::string fusionAgain;
  std::string indexAgain;
  print(settings, fusionAgain, indexAgain);
  Settings again;
  FUZZ_CHECK(
      weft::fuzz::accepts(weftSuccess, [&] { again = weft::parseFusionEnvironment(fusionAgain, indexAgain); }));
  for (size_t slot = 0; slot < settings.size(); ++slot) FUZZ_CHECK(same(settings[slot], again[slot]));
  return 0;
}
