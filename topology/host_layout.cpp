#include "topology/host_layout.h"

#include <algorithm>
#include <map>

namespace weft {

HostLayout HostLayout::fromHostIds(std::span<const std::string> hostIds) {
  std::map<std::string, int> numbers;
  std::vector<int> hostNumbers;
  hostNumbers.reserve(hostIds.size());
  for (const std::string& id : hostIds) {
    auto [it, fresh] = numbers.emplace(id, static_cast<int>(numbers.size()));
    hostNumbers.push_back(it->second);
  }
  return fromHostOf(hostNumbers);
}

HostLayout HostLayout::fromHostOf(std::span<const int> hostOfRank) {
  HostLayout layout;
  std::map<int, int> numbers;  // the caller's host number -> ours, by lowest rank
  for (int host : hostOfRank) {
    auto [it, fresh] = numbers.emplace(host, static_cast<int>(layout.ranksOn_.size()));
    if (fresh) layout.ranksOn_.emplace_back();
    const int rank = static_cast<int>(layout.hostOf_.size());
    layout.hostOf_.push_back(it->second);
    layout.localIndex_.push_back(static_cast<int>(layout.ranksOn_[it->second].size()));
    layout.ranksOn_[it->second].push_back(rank);
  }
  layout.derive();
  return layout;
}

bool HostLayout::uniform() const {
  return std::all_of(ranksOn_.begin(), ranksOn_.end(),
                     [&](const std::vector<int>& ranks) { return ranks.size() == ranksOn_.front().size(); });
}

bool HostLayout::contiguous() const {
  return std::all_of(ranksOn_.begin(), ranksOn_.end(), [](const std::vector<int>& ranks) {
    return ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size());
  });
}

void HostLayout::derive() {
  hostOrder_.clear();
  for (const std::vector<int>& ranks : ranksOn_) hostOrder_.insert(hostOrder_.end(), ranks.begin(), ranks.end());
  size_t fewest = ranksOn_.empty() ? 0 : ranksOn_.front().size();
  for (const std::vector<int>& ranks : ranksOn_) fewest = std::min(fewest, ranks.size());
  ranksWithIndex_.assign(fewest, std::vector<int>(ranksOn_.size()));
  for (size_t index = 0; index < fewest; ++index) {
    std::transform(ranksOn_.begin(), ranksOn_.end(), ranksWithIndex_[index].begin(),
                   [&](const std::vector<int>& host) { return host[index]; });
  }
}

}  // namespace weft
