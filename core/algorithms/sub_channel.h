// A Channel over some ranks of another, renumbered 0..k-1 in the order given: hierarchical algorithms run
// ordinary algorithms among a host's ranks or among one rank per host, and a ring can follow the hosts.
// Messages keep the parent's per-pair order, so phases that reuse a pair of ranks stay matched.
#pragma once

#include <algorithm>
#include <span>

#include "core/algorithms/channel.h"
#include "core/common/error.h"

namespace weft {

class SubChannel final : public Channel {
 public:
  // `members`: the parent's ranks, in this channel's order; the parent's own rank must be one of them. Not
  // copied (a SubChannel costs no allocation): the list must outlive the channel.
  SubChannel(Channel& parent, std::span<const int> members) : parent_(parent), members_(members) {
    auto it = std::find(members_.begin(), members_.end(), parent.rank());
    if (it == members_.end()) fail(weftInternalError, "rank {} is not a member of its sub-channel", parent.rank());
    rank_ = static_cast<int>(it - members_.begin());
  }

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  Request isend(int peer, const void* data, size_t bytes) override {
    return parent_.isend(member(peer), data, bytes);
  }
  Request irecv(int peer, void* data, size_t bytes) override { return parent_.irecv(member(peer), data, bytes); }
  Request isendv(int peer, std::span<const BufferPiece> pieces) override {
    return parent_.isendv(member(peer), pieces);
  }
  Request irecvv(int peer, std::span<const BufferPiece> pieces) override {
    return parent_.irecvv(member(peer), pieces);
  }
  void waitAll(std::span<Request> requests) override { parent_.waitAll(requests); }
  void* scratch(int slot, size_t bytes) override { return parent_.scratch(slot, bytes); }
  bool cutsLargeMessages(int peer) const override { return parent_.cutsLargeMessages(member(peer)); }
  bool copiesLargeMessagesOnce() const override { return parent_.copiesLargeMessagesOnce(); }

 private:
  int member(int peer) const {
    if (peer < 0 || static_cast<size_t>(peer) >= members_.size()) {
      fail(weftInternalError, "peer {} is not a member of a sub-channel of {}", peer, members_.size());
    }
    return members_[static_cast<size_t>(peer)];
  }

  Channel& parent_;
  std::span<const int> members_;
  int rank_ = 0;
};

}  // namespace weft
