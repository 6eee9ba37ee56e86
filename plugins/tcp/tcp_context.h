// The plugin context (one per init): chosen address, settings, and the sockets waitReady watches.
#ifndef WEFT_PLUGINS_TCP_CONTEXT_H
#define WEFT_PLUGINS_TCP_CONTEXT_H

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "tcp_congestion.h"
#include "tcp_iface.h"
#include "weft/plugin.h"

namespace weft::tcp {

class Context;
struct PendingConnect;

// A socket owned by one comm (or one connection being set up), registered with its context for waitReady.
// events is what the owner waits for (POLLIN, POLLOUT, or 0 while it has nothing pending); the owner
// updates it, waitReady reads it from any thread. Closes the socket when destroyed (not when its constructor
// throws: fd then stays the caller's).
class PolledSocket {
 public:
  PolledSocket(Context* ctx, int fd, short events);
  ~PolledSocket();
  PolledSocket(const PolledSocket&) = delete;
  PolledSocket& operator=(const PolledSocket&) = delete;

  int fd() const { return fd_; }
  // Unregisters and hands the socket over to the caller, who closes it.
  int release();
  // Records what to wake for. No system call: the epoll set catches up in the next waitReady, so a
  // transfer that completes without anyone sleeping costs no epoll_ctl at all.
  void want(short events);
  short wanted() const { return events_.load(); }

 private:
  friend class Context;
  Context* ctx_;
  int fd_;
  std::atomic<short> events_;
  std::atomic<bool> dirty_{false};  // on the context's list of sockets to bring up to date
  short registered_ = 0;            // what the epoll set holds for fd_ (0: absent); under the context's mutex
};

class Context {
 public:
  Context(const weftPluginHost_v1* host, Interface iface, long long bufferBytes, int deadPeerSeconds);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const weftPluginHost_v1* host() const { return host_; }
  const Interface& iface() const { return iface_; }
  long long bufferBytes() const { return bufferBytes_; }
  int deadPeerSeconds() const { return deadPeerSeconds_; }  // WEFT_SOCKET_DEAD_PEER (watchLiveness)

  // Brings the epoll set up to date with the sockets' wanted() events, then blocks up to timeoutUs (<= 0:
  // does not block) until a socket is ready for what it waits for. Only sockets that changed are visited,
  // and one epoll set holds them all, so a wait costs the same with 2 peers or 2000.
  void waitReady(int timeoutUs);

  // Number of registered sockets (open comms and connections being set up).
  size_t openSockets();

  // WEFT_SOCKET_PAIR: whether connectPaired may share one socket between the two directions of a pair.
  bool pairSockets = true;
  // WEFT_SOCKET_CONGESTION (tcp_congestion.h) and what a new socket gets on this host.
  CongestionSetting congestion;
  std::string hostCongestion;
  // chooseCongestion and restoreBetweenHosts on a socket (`what`: its peer, or "listener"), logged.
  void chooseCongestionFor(int fd, const std::string& what, bool withinHost) const;
  void restoreCongestionBetweenHosts(int fd, const std::string& peer) const;

  // Connections being set up by connect(), found again by handle, token and connector id.
  std::mutex connectMutex;
  std::vector<std::unique_ptr<PendingConnect>> connects;

 private:
  friend class PolledSocket;
  void add(PolledSocket* s);
  void markDirty(PolledSocket* s);
  void remove(PolledSocket* s);
  void syncLocked(PolledSocket* s);

  const weftPluginHost_v1* host_;
  Interface iface_;
  long long bufferBytes_;
  int deadPeerSeconds_;
  std::mutex mutex_;
  std::unordered_set<PolledSocket*> sockets_;
  std::vector<PolledSocket*> dirty_;  // sockets whose wanted() may differ from what epoll holds
  int epollFd_;
};

}  // namespace weft::tcp

#endif  // WEFT_PLUGINS_TCP_CONTEXT_H
