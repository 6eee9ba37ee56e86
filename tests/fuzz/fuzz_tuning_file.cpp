// WEFT_TUNING_FILE (core/tuner/tuning_file.cpp parseTuningFile, the text readTuningFile reads): an accepted
// file holds only entries the cost model can take (a flat algorithm of its collective, 2 <= nranks, 2 to 64
// ascending finite sizes each with a finite time) and only settings that are Weft's. JSON errors must come
// out as weft::Error, not as nlohmann's exceptions.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/common/config.h"
#include "core/tuner/tuning_file.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::TuningFile file;
  if (!weft::fuzz::accepts(weftInvalidArgument,
                           [&] { file = weft::parseTuningFile(weft::fuzz::text(data, size), "fuzz.json"); }))
    return 0;
  for (const weft::TuningEntry& e : file.entries) {
    FUZZ_CHECK(weft::supports(e.collective, e.algorithm) && e.algorithm != weft::Algorithm::Hierarchical);
    FUZZ_CHECK(e.nranks >= 2);
    FUZZ_CHECK(e.bytes.size() >= 2 && e.bytes.size() <= 64 && e.bytes.size() == e.timesUs.size());
    for (size_t i = 0; i < e.bytes.size(); ++i) {
      FUZZ_CHECK(std::isfinite(e.bytes[i]) && std::isfinite(e.timesUs[i]) && e.bytes[i] >= 0 && e.timesUs[i] >= 0);
      FUZZ_CHECK(i == 0 || e.bytes[i] > e.bytes[i - 1]);
    }
  }
  const std::vector<weft::config::Variable>& all = weft::config::variables();
  for (const auto& setting : file.settings) {
    const std::string& name = setting.first;
    FUZZ_CHECK(name != "WEFT_TUNING_FILE");
    FUZZ_CHECK(
        std::any_of(all.begin(), all.end(), [&](const weft::config::Variable& v) { return name == v.name; }));
  }
  return 0;
}
