#include "shm_socket.h"

#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "shm_wire.h"

namespace weft::shm {

namespace {

constexpr int kMaxFds = 4;

// The abstract address: sun_path starts with a NUL and the name is not terminated; the length says where
// it ends.
socklen_t abstractAddress(const std::string& name, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path + 1, name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

}  // namespace

bool randomSocketName(std::string* name, std::string* error) {
  unsigned char bits[16];
  size_t got = 0;
  while (got < sizeof(bits)) {
    ssize_t n = getrandom(bits + got, sizeof(bits) - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = std::string("getrandom failed: ") + std::strerror(errno);
      return false;
    }
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  *name = kSocketPrefix;
  for (unsigned char b : bits) {
    *name += kHex[b >> 4];
    *name += kHex[b & 15];
  }
  return true;
}

int listenAbstract(const std::string& name, std::string* error) {
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket(AF_UNIX) failed: ") + std::strerror(errno);
    return -1;
  }
  sockaddr_un addr;
  socklen_t len = abstractAddress(name, &addr);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0 || listen(fd, SOMAXCONN) != 0) {
    *error = "listening on abstract socket @" + name + " failed: " + std::strerror(errno);
    closeFd(fd);
    return -1;
  }
  return fd;
}

int connectAbstract(const std::string& name) {
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr;
  socklen_t len = abstractAddress(name, &addr);
  for (;;) {
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) == 0) return fd;
    if (errno != EINTR) break;
  }
  closeFd(fd);
  return -1;
}

ssize_t sendWithFds(int fd, const void* data, size_t bytes, const int* fds, int nfds) {
  if (nfds < 0 || nfds > kMaxFds) {
    errno = EINVAL;
    return -1;
  }
  iovec iov{const_cast<void*>(data), bytes};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<size_t>(nfds));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<size_t>(nfds));
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<size_t>(nfds));
  }
  for (;;) {
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0 || errno != EINTR) return n;
  }
}

ssize_t recvWithFds(int fd, void* data, size_t bytes, int* fds, int maxFds, int* nfds, bool* truncated) {
  *nfds = 0;
  *truncated = false;
  iovec iov{data, bytes};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return n;
  // Every fd that arrived is taken, even beyond maxFds, so that none leaks.
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (*nfds < maxFds) {
        fds[(*nfds)++] = received;
      } else {
        closeFd(received);
        *truncated = true;
      }
    }
  }
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) *truncated = true;
  return n;
}

pid_t peerPid(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) return -1;
  return cred.pid;
}

SocketState socketState(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  int n;
  do {
    n = poll(&p, 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return SocketState::Quiet;
  if ((p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0) return SocketState::Gone;
  return (p.revents & POLLIN) != 0 ? SocketState::Readable : SocketState::Quiet;
}

void closeFd(int fd) {
  if (fd < 0) return;
  int saved = errno;
  close(fd);
  errno = saved;
}

void closeFds(const int* fds, int nfds) {
  for (int i = 0; i < nfds; ++i) closeFd(fds[i]);
}

}  // namespace weft::shm
