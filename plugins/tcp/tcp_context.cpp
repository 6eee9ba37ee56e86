#include "tcp_context.h"

#include <poll.h>

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

int PolledSocket::release() {
  ctx_->remove(this);
  int fd = fd_;
  fd_ = -1;
  return fd;
}

Context::Context(const weftPluginHost_v1* host, Interface iface, long long bufferBytes)
    : host_(host), iface_(std::move(iface)), bufferBytes_(bufferBytes) {}

// Pending connects unregister their sockets from this context: gone before the registry is.
Context::~Context() { connects.clear(); }

void Context::add(PolledSocket* s) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.insert(s);
}

void Context::remove(PolledSocket* s) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.erase(s);
}

size_t Context::openSockets() {
  std::lock_guard<std::mutex> lock(mutex_);
  return sockets_.size();
}

void Context::waitReady(int timeoutUs) {
  thread_local std::vector<pollfd> fds;
  fds.clear();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const PolledSocket* s : sockets_) {
      short events = s->wanted();
      if (events != 0) fds.push_back(pollfd{s->fd(), events, 0});
    }
  }
  // A socket closed by its owner after the snapshot at worst wakes this call early: the caller retries.
  if (timeoutUs < 0) timeoutUs = 0;
  timespec timeout{timeoutUs / 1000000, static_cast<long>(timeoutUs % 1000000) * 1000};
  ppoll(fds.data(), fds.size(), &timeout, nullptr);
}

}  // namespace weft::tcp
