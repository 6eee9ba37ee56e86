#include "tcp_context.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <utility>

#include "tcp_log.h"
#include "tcp_setup.h"
#include "tcp_socket.h"

namespace weft::tcp {

PolledSocket::PolledSocket(Context* ctx, int fd, short events) : ctx_(ctx), fd_(fd), events_(events) {
  ctx_->add(this);
}

PolledSocket::~PolledSocket() {
  if (fd_ < 0) return;
  ctx_->remove(this);
  closeFd(fd_);
}

// The events are published before the dirty flag is tested, and waitReady clears the flag before it reads
// the events: whichever way the two interleave, the newest events reach the epoll set before a wait.
void PolledSocket::want(short events) {
  if (events_.exchange(events) != events && fd_ >= 0 && !dirty_.exchange(true)) ctx_->markDirty(this);
}

int PolledSocket::release() {
  ctx_->remove(this);
  int fd = fd_;
  fd_ = -1;
  return fd;
}

Context::Context(const weftPluginHost_v1* host, Interface iface, long long bufferBytes, int deadPeerSeconds)
    : host_(host),
      iface_(std::move(iface)),
      bufferBytes_(bufferBytes),
      deadPeerSeconds_(deadPeerSeconds),
      epollFd_(epoll_create1(EPOLL_CLOEXEC)) {}

// Pending connects unregister their sockets from this context: gone before the registry is.
Context::~Context() {
  connects.clear();
  if (epollFd_ >= 0) close(epollFd_);
}

void Context::add(PolledSocket* s) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.insert(s);
  // A socket is on dirty_ at most once: room for all of them now, so that no wait, however the calls
  // around it are timed, grows the list later (launches allocate nothing, docs/plans.md).
  dirty_.reserve(sockets_.size());
  s->dirty_ = true;
  dirty_.push_back(s);
}

void Context::markDirty(PolledSocket* s) {
  std::lock_guard<std::mutex> lock(mutex_);
  dirty_.push_back(s);
}

// Only sockets with pending work are in the epoll set: epoll reports a hung-up socket even when asked for
// nothing, and an idle broken connection must not keep waking waitReady. poll's POLLIN/POLLOUT have the
// values of epoll's EPOLLIN/EPOLLOUT.
void Context::syncLocked(PolledSocket* s) {
  s->dirty_ = false;
  short events = s->wanted();
  if (events == s->registered_) return;
  epoll_event e{static_cast<uint32_t>(events), {.ptr = s}};
  int op = events == 0 ? EPOLL_CTL_DEL : s->registered_ == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  epoll_ctl(epollFd_, op, s->fd(), &e);
  s->registered_ = events;
}

void Context::remove(PolledSocket* s) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.erase(s);
  std::erase(dirty_, s);
  if (s->registered_ != 0) epoll_ctl(epollFd_, EPOLL_CTL_DEL, s->fd(), nullptr);
  s->registered_ = 0;
}

size_t Context::openSockets() {
  std::lock_guard<std::mutex> lock(mutex_);
  return sockets_.size();
}

void Context::waitReady(int timeoutUs) {
  if (timeoutUs < 0) timeoutUs = 0;
  timespec timeout{timeoutUs / 1000000, static_cast<long>(timeoutUs % 1000000) * 1000};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (PolledSocket* s : dirty_) syncLocked(s);
    dirty_.clear();
  }
  epoll_event ready[16];
  // Readiness is level-triggered and re-checked by the caller's progress, so the events are not needed.
  epoll_pwait2(epollFd_, ready, 16, &timeout, nullptr);
}

namespace {

void logCongestion(const weftPluginHost_v1* host, const std::string& what, const CongestionApplied& applied) {
  if (applied.change.empty()) return;
  logf(host, applied.refused ? weftLogWarn : weftLogDebug, "%s: congestion control %s", what.c_str(),
       applied.change.c_str());
}

}  // namespace

void Context::chooseCongestionFor(int fd, const std::string& what, bool withinHost) const {
  logCongestion(host_, what, chooseCongestion(fd, congestion, hostCongestion, withinHost));
}

void Context::restoreCongestionBetweenHosts(int fd, const std::string& peer) const {
  logCongestion(host_, "connection with " + peer, restoreBetweenHosts(fd, congestion, hostCongestion));
}

}  // namespace weft::tcp
