#include "core/tuner/algo_rules.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "core/common/error.h"

namespace weft {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

// "64K", "1M", "0", "inf" -> bytes (inf: no end).
size_t parseSize(const std::string& text, const std::string& entry) {
  if (text == "inf") return static_cast<size_t>(-1);
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  if (*end == 'M' || *end == 'm') shift = 20;
  if (*end == 'G' || *end == 'g') shift = 30;
  if (shift != 0) ++end;
  if (text.empty() || text[0] == '-' || errno != 0 || end == text.c_str() || *end != '\0' ||
      value > (static_cast<unsigned long long>(-1) >> shift)) {
    fail(weftInvalidArgument, "WEFT_ALGO entry '{}': '{}' is not a size (bytes, with K, M or G, or inf)", entry,
         text);
  }
  return static_cast<size_t>(value << shift);
}

}  // namespace

std::vector<AlgoRule> parseAlgoRules(const std::string& text) {
  std::vector<AlgoRule> rules;
  for (const std::string& entry : split(text, ';')) {
    if (entry.empty()) continue;
    const std::vector<std::string> fields = split(entry, ':');
    if (fields.size() < 2 || fields.size() > 3) {
      fail(weftInvalidArgument, "WEFT_ALGO entry '{}' is not collective:algorithm or collective:algorithm:lo-hi",
           entry);
    }
    const std::optional<Collective> c = collectiveNamed(fields[0]);
    if (!c) {
      fail(weftInvalidArgument,
           "WEFT_ALGO: unknown collective '{}' (allreduce, broadcast, reduce, allgather, reducescatter, alltoall, "
           "barrier)",
           fields[0]);
    }
    const std::optional<Algorithm> a = algorithmNamed(fields[1]);
    if (!a || !supports(*c, *a)) {
      fail(weftInvalidArgument, "WEFT_ALGO: '{}' is not an algorithm of {} (choose from: {})", fields[1],
           fields[0], supportedList(*c));
    }
    AlgoRule rule{*c, *a};
    if (fields.size() == 3) {
      const size_t dash = fields[2].find('-');
      if (dash == std::string::npos)
        fail(weftInvalidArgument, "WEFT_ALGO entry '{}': the range is not lo-hi", entry);
      rule.lo = parseSize(fields[2].substr(0, dash), entry);
      rule.hi = parseSize(fields[2].substr(dash + 1), entry);
      if (rule.lo >= rule.hi) fail(weftInvalidArgument, "WEFT_ALGO entry '{}': the range holds no size", entry);
    }
    rules.push_back(rule);
  }
  return rules;
}

std::optional<Algorithm> forcedAlgorithm(const std::vector<AlgoRule>& rules, Collective c, size_t bytes) {
  auto holds = [&](const AlgoRule& rule) { return rule.collective == c && bytes >= rule.lo && bytes < rule.hi; };
  auto rule = std::find_if(rules.begin(), rules.end(), holds);
  if (rule == rules.end()) return std::nullopt;
  return rule->algorithm;
}

}  // namespace weft
