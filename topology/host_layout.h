// Which ranks share a host: the rank-to-host map every rank builds from the host identities exchanged at
// bootstrap (topology/host.h). Hierarchical algorithms and the tuner read it.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace weft {

class HostLayout {
 public:
  HostLayout() = default;
  // Hosts are numbered in order of their lowest rank, so every rank numbers them alike.
  static HostLayout fromHostIds(std::span<const std::string> hostIds);
  static HostLayout fromHostOf(std::span<const int> hostOfRank);

  int numRanks() const { return static_cast<int>(hostOf_.size()); }
  int numHosts() const { return static_cast<int>(ranksOn_.size()); }
  int hostOf(int rank) const { return hostOf_[rank]; }
  // The ranks of a host, ascending.
  const std::vector<int>& ranksOn(int host) const { return ranksOn_[host]; }
  // A rank's position among its host's ranks.
  int localIndex(int rank) const { return localIndex_[rank]; }
  // Every host has the same number of ranks.
  bool uniform() const;
  // Each host's ranks are consecutive (then a ring in rank order crosses hosts numHosts times).
  bool contiguous() const;
  // All ranks, host by host: a ring in this order crosses between hosts only numHosts times.
  const std::vector<int>& hostOrder() const { return hostOrder_; }
  // The rank with local index `index` on each host, in host order (every host must have one).
  const std::vector<int>& ranksWithIndex(int index) const { return ranksWithIndex_[index]; }

 private:
  // Fills hostOrder_ and ranksWithIndex_ once, so that the algorithms reading them allocate nothing.
  void derive();

  std::vector<int> hostOf_;
  std::vector<int> localIndex_;
  std::vector<std::vector<int>> ranksOn_;
  std::vector<int> hostOrder_;
  std::vector<std::vector<int>> ranksWithIndex_;  // for the local indices every host has
};

}  // namespace weft
