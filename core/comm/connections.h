// The transport connections of one communicator, made on first use.
//
// Each rank listens once per transport (the handles travel in the bootstrap). The first message from
// rank a to rank b on channel c makes a connect from a; b accepts it when it first receives from a on
// c. Both calls are non-blocking, so a rank waiting to accept never stops its own sends from starting.
// Channels keep traffic apart that must not interleave: 0 for collectives, 1 for Send/Recv, 2 for the
// control channel (fault notices and stall reports, core/comm/control_channel.h), and from 3 on the lanes of
// plan streams that run collectives beside the main one (core/comm/lane.h).
//
// Several threads of a rank may use one communicator's connections at once (a plan's streams, the control
// channel's poll): making, accepting and looking up connections is serialised by a lock; each connection is
// then used by the one thread of its channel. Connections of the first kNumChannels channels, once made, are
// also found without the lock: every collective and Send/Recv looks its connections up.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/peer_info.h"
#include "core/plugins/loader.h"

namespace weft {

enum ChannelId : int { kCollectiveChannel = 0, kPointToPointChannel = 1, kControlChannel = 2, kNumChannels = 3 };

// Lanes a plan may run at once: lane 0 is the communicator's main lane (kCollectiveChannel), lane i > 0 uses
// channel kNumChannels + i - 1. Channel ids travel in 8 bits of a connector id.
constexpr int kMaxLanes = 64;
constexpr int laneChannel(int lane) { return lane == 0 ? kCollectiveChannel : kNumChannels + lane - 1; }

class Connections {
 public:
  // Opens a listener on every transport.
  Connections(uint64_t token, const std::vector<LoadedPlugin>& transports);
  ~Connections();
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  // The listen handles to publish.
  std::vector<TransportHandle> handles() const;
  // Learns this rank, every rank's handles and host, and picks the transport for each peer. Throws when
  // some peer cannot be reached by any transport both sides have.
  void setPeers(const std::vector<PeerInfo>& peers, int myRank, const std::string& myHostId);

  // Non-blocking: the connection, or nullptr while it is not ready yet.
  void* trySend(int peer, int channel);
  void* tryRecv(int peer, int channel);
  // The connection when it is made already (channels below kNumChannels), else nullptr; never connects or
  // accepts, takes no lock.
  void* madeConnection(bool isRecv, int peer, int channel) const {
    std::atomic<void*>* slot = made(isRecv, peer, channel);
    return slot != nullptr ? slot->load(std::memory_order_acquire) : nullptr;
  }
  // Accepts every connection that has arrived on any transport. The transports refuse and log those
  // without the job's token, so calling this while waiting also drains strangers from the listeners.
  void acceptArrived();
  // The peers that have connected to this rank on the control channel so far, in the order they connected. A
  // reference, so that the control channel's periodic poll allocates nothing; accepting may append to it, so a
  // caller walks it by index, holding lock() (another thread may accept).
  const std::vector<int>& connectedToControl() const { return connectedToControl_; }
  std::unique_lock<std::recursive_mutex> lock() const { return std::unique_lock(mutex_); }

  const weftTransportOps_v1& ops(int peer) const { return *links_[linkOf_[peer]].plugin->plugin->transport; }
  // The vectored messages of the transport serving `peer`, or null when it has none.
  const weftTransportVecOps_v1* vecOps(int peer) const { return links_[linkOf_[peer]].plugin->transportVec; }
  // Whether the transport to peer reaches only ranks on this host (shm).
  bool sameHostOnly(int peer) const { return links_[linkOf_[peer]].plugin->props.reach == weftReachSameHost; }
  // Lets the core sleep until the transport serving `peer` may progress.
  void waitReady(int peer, int timeoutUs);
  const std::string& transportName(int peer) const { return links_[linkOf_[peer]].plugin->name; }
  // The transport two other ranks use between them, as they choose it (a's preference order first); empty
  // when they have none in common. Every rank computes the same answer from the same peer list.
  std::string transportBetween(const PeerInfo& a, const PeerInfo& b) const;
  // Whether the transport of that name reaches only ranks of its own host (shm).
  bool sameHostOnlyTransport(const std::string& name) const;

 private:
  struct Link {
    const LoadedPlugin* plugin;
    void* listener = nullptr;
    NetHandle handle{};
  };
  using Key = std::pair<int, int>;  // (peer, channel)

  void acceptArrived(Link& link);
  // The lock-free copy of a made connection of the first kNumChannels channels (null: not made, or a lane's
  // channel): written once under the lock, read without it.
  std::atomic<void*>* made(bool isRecv, int peer, int channel) const;
  void remember(bool isRecv, int peer, int channel, void* comm);

  uint64_t token_;
  int rank_ = -1;
  std::vector<Link> links_;
  std::vector<int> linkOf_;  // transport index per peer
  std::vector<NetHandle> peerHandles_;
  std::map<Key, void*> sendComms_;
  std::map<Key, void*> recvComms_;
  std::unique_ptr<std::atomic<void*>[]> made_;  // [isRecv][peer][channel < kNumChannels], from setPeers
  std::vector<int> connectedToControl_;         // the peers of recvComms_ on kControlChannel
  mutable std::recursive_mutex mutex_;          // over the maps, the listeners and the transports' connect/accept
};

}  // namespace weft
