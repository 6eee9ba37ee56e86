// A Channel over some ranks of another, renumbered 0..k-1 in the order given: hierarchical algorithms run
// ordinary algorithms among a host's ranks or among one rank per host, and a ring can follow the hosts.
// Messages keep the parent's per-pair order, so phases that reuse a pair of ranks stay matched.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "core/algorithms/channel.h"
#include "core/common/error.h"

namespace weft {

class SubChannel final : public Channel {
 public:
  // `members`: the parent's ranks, in this channel's order; the parent's own rank must be one of them.
  SubChannel(Channel& parent, std::vector<int> members) : parent_(parent), members_(std::move(members)) {
    auto it = std::find(members_.begin(), members_.end(), parent.rank());
    if (it == members_.end()) fail(weftInternalError, "rank {} is not a member of its sub-channel", parent.rank());
    rank_ = static_cast<int>(it - members_.begin());
  }

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  Request isend(int peer, const void* data, size_t bytes) override {
    return parent_.isend(members_.at(peer), data, bytes);
  }
  Request irecv(int peer, void* data, size_t bytes) override {
    return parent_.irecv(members_.at(peer), data, bytes);
  }
  void waitAll(std::span<Request> requests) override { parent_.waitAll(requests); }
  void* scratch(int slot, size_t bytes) override { return parent_.scratch(slot, bytes); }

 private:
  Channel& parent_;
  std::vector<int> members_;
  int rank_ = 0;
};

}  // namespace weft
