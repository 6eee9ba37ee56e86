#include "core/comm/connections.h"

#include "core/common/error.h"
#include "core/common/log.h"

namespace weft {
namespace {

// What the acceptor learns about who connected: the connector's rank and channel.
uint64_t connectorIdOf(int rank, int channel) { return (static_cast<uint64_t>(rank) << 8) | uint64_t(channel); }

void check(weftResult_t r, const char* call, const std::string& transport, int peer) {
  if (r != weftSuccess) {
    fail(r == weftRemoteError ? weftRemoteError : weftSystemError, "{} transport: {} with rank {} failed: {}",
         transport, call, peer, weftGetErrorString(r));
  }
}

}  // namespace

Connections::Connections(uint64_t token, const std::vector<LoadedPlugin>& transports) : token_(token) {
  for (const LoadedPlugin& plugin : transports) {
    Link link{&plugin};
    weftResult_t r = plugin.plugin->transport->listen(plugin.context, token, link.handle.data(), &link.listener);
    if (r != weftSuccess) {
      log::warn("{} transport: listen failed ({}); not used by this communicator", plugin.name,
                weftGetErrorString(r));
      continue;
    }
    links_.push_back(link);
  }
  if (links_.empty()) fail(weftSystemError, "no transport could listen for connections");
}

Connections::~Connections() {
  for (auto& [key, comm] : sendComms_) ops(key.first).closeSend(comm);
  for (auto& [key, comm] : recvComms_) ops(key.first).closeRecv(comm);
  for (Link& link : links_) link.plugin->plugin->transport->closeListen(link.listener);
}

std::vector<TransportHandle> Connections::handles() const {
  std::vector<TransportHandle> result;
  for (const Link& link : links_) result.push_back({link.plugin->name, link.handle});
  return result;
}

void Connections::setPeers(const std::vector<PeerInfo>& peers, int myRank, const std::string& myHostId) {
  rank_ = myRank;
  made_ = std::make_unique<std::atomic<void*>[]>(2 * peers.size() * kNumChannels);  // all null
  linkOf_.assign(peers.size(), -1);
  peerHandles_.assign(peers.size(), NetHandle{});
  for (size_t peer = 0; peer < peers.size(); ++peer) {
    bool sameHost = peers[peer].hostId == myHostId;
    // Both ends walk the transports in the same (preference) order, so they pick the same one.
    for (size_t i = 0; i < links_.size() && linkOf_[peer] < 0; ++i) {
      if (links_[i].plugin->props.reach == weftReachSameHost && !sameHost) continue;
      for (const TransportHandle& theirs : peers[peer].transports) {
        if (theirs.name == links_[i].plugin->name) {
          linkOf_[peer] = static_cast<int>(i);
          peerHandles_[peer] = theirs.handle;
          break;
        }
      }
    }
    if (linkOf_[peer] < 0) {
      fail(weftInvalidUsage, "rank {} cannot reach rank {}: no transport in common (check WEFT_PLUGINS on both)",
           rank_, peer);
    }
  }
}

bool Connections::sameHostOnlyTransport(const std::string& name) const {
  for (const Link& link : links_) {
    if (link.plugin->name == name) return link.plugin->props.reach == weftReachSameHost;
  }
  return false;
}

std::string Connections::transportBetween(const PeerInfo& a, const PeerInfo& b) const {
  for (const TransportHandle& mine : a.transports) {
    if (sameHostOnlyTransport(mine.name) && a.hostId != b.hostId) continue;
    for (const TransportHandle& theirs : b.transports) {
      if (theirs.name == mine.name) return mine.name;
    }
  }
  return {};
}

std::atomic<void*>* Connections::made(bool isRecv, int peer, int channel) const {
  if (channel >= kNumChannels || !made_) return nullptr;
  const size_t peers = linkOf_.size();
  return &made_[(static_cast<size_t>(isRecv) * peers + static_cast<size_t>(peer)) * kNumChannels +
                static_cast<size_t>(channel)];
}

void Connections::remember(bool isRecv, int peer, int channel, void* comm) {
  if (std::atomic<void*>* slot = made(isRecv, peer, channel)) slot->store(comm, std::memory_order_release);
}

void* Connections::trySend(int peer, int channel) {
  if (void* comm = madeConnection(false, peer, channel)) return comm;
  std::lock_guard guard(mutex_);
  Key key{peer, channel};
  if (auto it = sendComms_.find(key); it != sendComms_.end()) return it->second;
  void* comm = nullptr;
  const Link& link = links_[linkOf_[peer]];
  void* ctx = link.plugin->context;
  const unsigned char* handle = peerHandles_[peer].data();
  const uint64_t connectorId = connectorIdOf(rank_, channel);
  // With the pairing extension, the peer's connection of the same channel towards this rank may share the
  // wire (both ways on one socket).
  const weftTransportPairOps_v1* pair = link.plugin->transportPair;
  weftResult_t r = pair != nullptr ? pair->connectPaired(ctx, handle, token_, connectorId, link.listener,
                                                         static_cast<uint64_t>(channel), &comm)
                                   : ops(peer).connect(ctx, handle, token_, connectorId, &comm);
  check(r, "connect", link.plugin->name, peer);
  if (comm != nullptr) {
    sendComms_[key] = comm;
    remember(false, peer, channel, comm);
  }
  return comm;
}

void* Connections::tryRecv(int peer, int channel) {
  if (void* comm = madeConnection(true, peer, channel)) return comm;
  std::lock_guard guard(mutex_);
  Key key{peer, channel};
  if (auto it = recvComms_.find(key); it != recvComms_.end()) return it->second;
  acceptArrived(links_[linkOf_[peer]]);
  auto it = recvComms_.find(key);
  return it == recvComms_.end() ? nullptr : it->second;
}

void Connections::acceptArrived() {
  std::lock_guard guard(mutex_);
  for (Link& link : links_) acceptArrived(link);
}

// Accepts whatever has arrived on the link's transport, filing each under its connector.
void Connections::acceptArrived(Link& link) {
  for (;;) {
    void* comm = nullptr;
    uint64_t connectorId = 0;
    weftResult_t r = link.plugin->plugin->transport->accept(link.listener, &comm, &connectorId);
    if (r != weftSuccess) {
      fail(r == weftRemoteError ? weftRemoteError : weftSystemError, "{} transport: accept failed: {}",
           link.plugin->name, weftGetErrorString(r));
    }
    if (comm == nullptr) break;
    int fromRank = static_cast<int>(connectorId >> 8);
    int fromChannel = static_cast<int>(connectorId & 0xff);
    if (fromRank < 0 || fromRank >= static_cast<int>(linkOf_.size()) ||
        fromChannel >= laneChannel(kMaxLanes - 1) + 1 || recvComms_.count({fromRank, fromChannel}) != 0) {
      log::warn("{} transport: closed a connection with an unexpected connector id {}", link.plugin->name,
                connectorId);
      link.plugin->plugin->transport->closeRecv(comm);
      continue;
    }
    recvComms_[{fromRank, fromChannel}] = comm;
    remember(true, fromRank, fromChannel, comm);
    if (fromChannel == kControlChannel) connectedToControl_.push_back(fromRank);
  }
}

void Connections::waitReady(int peer, int timeoutUs) {
  const Link& link = links_[linkOf_[peer]];
  if (link.plugin->plugin->transport->waitReady) {
    link.plugin->plugin->transport->waitReady(link.plugin->context, timeoutUs);
  }
}

}  // namespace weft
