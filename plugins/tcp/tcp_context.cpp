#include "tcp_context.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <ctime>
#include <utility>

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

void PolledSocket::want(short events) {
  if (events_.exchange(events, std::memory_order_relaxed) != events && fd_ >= 0) ctx_->modify(this, events);
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
  modify(s, s->wanted());
}

// Only sockets with pending work are in the epoll set: epoll reports a hung-up socket even when asked for
// nothing, and an idle broken connection must not keep waking waitReady. poll's POLLIN/POLLOUT have the
// values of epoll's EPOLLIN/EPOLLOUT.
void Context::modify(PolledSocket* s, short events) {
  if (events == 0) {
    epoll_ctl(epollFd_, EPOLL_CTL_DEL, s->fd(), nullptr);
    return;
  }
  epoll_event e{static_cast<uint32_t>(events), {.ptr = s}};
  if (epoll_ctl(epollFd_, EPOLL_CTL_MOD, s->fd(), &e) != 0) epoll_ctl(epollFd_, EPOLL_CTL_ADD, s->fd(), &e);
}

void Context::remove(PolledSocket* s) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.erase(s);
  epoll_ctl(epollFd_, EPOLL_CTL_DEL, s->fd(), nullptr);
}

size_t Context::openSockets() {
  std::lock_guard<std::mutex> lock(mutex_);
  return sockets_.size();
}

void Context::waitReady(int timeoutUs) {
  if (timeoutUs < 0) timeoutUs = 0;
  timespec timeout{timeoutUs / 1000000, static_cast<long>(timeoutUs % 1000000) * 1000};
  epoll_event ready[16];
  // Readiness is level-triggered and re-checked by the caller's progress, so the events are not needed.
  epoll_pwait2(epollFd_, ready, 16, &timeout, nullptr);
}

}  // namespace weft::tcp
