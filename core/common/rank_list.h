// Rank lists in messages: "rank 1", "ranks 0, 2"; a wait's silent ranks, "rank(s) 1, 3".
#pragma once

#include <set>
#include <string>
#include <vector>

namespace weft {

// "0, 2": the ranks in [first, last), comma-separated.
template <typename It>
std::string joinedRanks(It first, It last) {
  std::string text;
  for (It it = first; it != last; ++it) text += (it == first ? "" : ", ") + std::to_string(*it);
  return text;
}

inline std::string rankList(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + joinedRanks(ranks.begin(), ranks.end());
}

// The ranks a wait heard nothing from, as its timeout and stall messages name them: "rank(s) 1, 3".
inline std::string silentRankList(const std::set<int>& ranks) {
  return "rank(s) " + joinedRanks(ranks.begin(), ranks.end());
}

}  // namespace weft
