// WEFT_ALGO (core/tuner/algo_rules.cpp): every accepted rule names an algorithm its collective has and a
// non-empty range; printing the rules back and parsing them again gives the same rules; forcedAlgorithm
// agrees with the first rule that holds a size.
#include <algorithm>
#include <string>
#include <vector>

#include "core/tuner/algo_rules.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using weft::AlgoRule;

std::string sizeText(size_t bytes) { return bytes == static_cast<size_t>(-1) ? "inf" : std::to_string(bytes); }

std::string print(const std::vector<AlgoRule>& rules) {
  std::string text;
  for (const AlgoRule& r : rules) {
    text += std::string(weft::collectiveName(r.collective)) + ":" + weft::algorithmName(r.algorithm) + ":" +
            sizeText(r.lo) + "-" + sizeText(r.hi) + ";";
  }
  return text;
}

bool same(const AlgoRule& a, const AlgoRule& b) {
  return a.collective == b.collective && a.algorithm == b.algorithm && a.lo == b.lo && a.hi == b.hi;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<AlgoRule> rules;
  if (!weft::fuzz::accepts(weftInvalidArgument,
                           [&] { rules = weft::parseAlgoRules(weft::fuzz::text(data, size)); }))
    return 0;
  for (const AlgoRule& r : rules) {
    FUZZ_CHECK(weft::supports(r.collective, r.algorithm));
    FUZZ_CHECK(r.lo < r.hi);
  }
  std::vector<AlgoRule> again;
  FUZZ_CHECK(weft::fuzz::accepts(weftSuccess, [&] { again = weft::parseAlgoRules(print(rules)); }));
  FUZZ_CHECK(again.size() == rules.size());
  for (size_t i = 0; i < rules.size(); ++i) FUZZ_CHECK(same(rules[i], again[i]));
  // The first rule that holds its own lower bound must be the one forcedAlgorithm picks there.
  for (const AlgoRule& r : rules) {
    const std::optional<weft::Algorithm> forced = weft::forcedAlgorithm(rules, r.collective, r.lo);
    FUZZ_CHECK(forced.has_value());
    const auto first = std::find_if(rules.begin(), rules.end(), [&](const AlgoRule& f) {
      return f.collective == r.collective && r.lo >= f.lo && r.lo < f.hi;
    });
    FUZZ_CHECK(first != rules.end() && *forced == first->algorithm);
  }
  return 0;
}
