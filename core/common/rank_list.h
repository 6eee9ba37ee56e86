// Rank lists in messages: "rank 1", "ranks 0, 2".
#pragma once

#include <string>
#include <vector>

namespace weft {

inline std::string rankList(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  return text;
}

}  // namespace weft
