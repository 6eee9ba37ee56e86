#include "core/bootstrap/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "core/common/config.h"
#include "core/common/error.h"
#include "core/common/log.h"

namespace weft {
namespace {

int millisecondsUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000));
}

// Waits until fd is ready for `events` or the deadline passes.
void waitFor(int fd, short events, Clock::time_point deadline, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, millisecondsUntil(deadline));
    if (n > 0) return;
    if (n < 0 && errno != EINTR) fail(weftSystemError, "poll while {}: {}", what, std::strerror(errno));
    if (Clock::now() >= deadline) fail(weftTimeout, "bootstrap timed out while {} (WEFT_TIMEOUT)", what);
  }
}

// Matches an interface name against one WEFT_SOCKET_IFNAME pattern list.
bool interfaceMatches(const std::string& name, const std::string& patterns) {
  std::string list = patterns;
  bool exclude = !list.empty() && list[0] == '^';
  if (exclude) list.erase(0, 1);
  bool exact = !list.empty() && list[0] == '=';
  if (exact) list.erase(0, 1);
  bool matched = false;
  std::stringstream entries(list);
  for (std::string entry; std::getline(entries, entry, ',');) {
    if (exact ? name == entry : name.rfind(entry, 0) == 0) matched = true;
  }
  return exclude ? !matched : matched;
}

}  // namespace

std::string SocketAddress::toString() const {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (storage.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&storage);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage);
  inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
  port = ntohs(in6->sin6_port);
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

SocketAddress parseSocketAddress(const std::string& text) {
  std::string host;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      fail(weftInvalidArgument, "'{}' is not host:port", text);
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) fail(weftInvalidArgument, "'{}' is not host:port", text);
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0 || result == nullptr) fail(weftInvalidArgument, "cannot resolve '{}': {}", text, gai_strerror(rc));
  SocketAddress address;
  for (const addrinfo* a = result; a != nullptr; a = a->ai_next) {
    std::memcpy(&address.storage, a->ai_addr, a->ai_addrlen);
    address.length = a->ai_addrlen;
    break;
  }
  freeaddrinfo(result);
  return address;
}

SocketAddress chooseBootstrapAddress() {
  auto patterns = config::get("WEFT_SOCKET_IFNAME");
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) fail(weftSystemError, "getifaddrs: {}", std::strerror(errno));
  SocketAddress chosen;
  SocketAddress loopback;
  std::string chosenName;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || !(i->ifa_flags & IFF_UP)) continue;
    int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    std::string name = i->ifa_name;
    socklen_t length = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr)) {
      continue;  // link-local needs a scope id; not worth it for a bootstrap
    }
    bool isLoopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    if (patterns ? !interfaceMatches(name, *patterns) : (isLoopback || name.rfind("docker", 0) == 0)) {
      if (isLoopback && family == AF_INET && loopback.length == 0) {
        std::memcpy(&loopback.storage, i->ifa_addr, length);
        loopback.length = length;
      }
      continue;
    }
    // Prefer IPv4 on the first matching interface.
    if (chosen.length == 0 || (chosenName == name && family == AF_INET && chosen.storage.ss_family != AF_INET)) {
      std::memcpy(&chosen.storage, i->ifa_addr, length);
      chosen.length = length;
      chosenName = name;
    }
  }
  freeifaddrs(list);
  if (chosen.length == 0) {
    if (patterns) fail(weftInvalidArgument, "WEFT_SOCKET_IFNAME='{}' matches no interface that is up", *patterns);
    chosen = loopback;
    chosenName = "lo";
  }
  if (chosen.length == 0) fail(weftSystemError, "no network interface is up, not even loopback");
  reinterpret_cast<sockaddr_in*>(&chosen.storage)->sin_port = 0;  // same offset for sockaddr_in6
  log::debug("bootstrap interface {} address {}", chosenName, chosen.toString());
  return chosen;
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) close(fd_);
}

int Socket::release() { return std::exchange(fd_, -1); }

Socket listenOn(SocketAddress& address, int backlog) {
  Socket s(socket(address.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd() < 0) fail(weftSystemError, "socket: {}", std::strerror(errno));
  int one = 1;
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(s.fd(), reinterpret_cast<sockaddr*>(&address.storage), address.length) != 0) {
    fail(weftSystemError, "cannot listen on {}: {}", address.toString(), std::strerror(errno));
  }
  if (listen(s.fd(), backlog) != 0) fail(weftSystemError, "listen: {}", std::strerror(errno));
  address.length = sizeof(address.storage);
  getsockname(s.fd(), reinterpret_cast<sockaddr*>(&address.storage), &address.length);
  return s;
}

Socket connectTo(const SocketAddress& address, Clock::time_point deadline) {
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    Socket s(socket(address.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.fd() < 0) fail(weftSystemError, "socket: {}", std::strerror(errno));
    if (connect(s.fd(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) == 0) {
      int one = 1;
      setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return s;
    }
    int error = errno;
    if (error != ECONNREFUSED && error != EINTR && error != ETIMEDOUT && error != ECONNRESET) {
      fail(weftSystemError, "cannot connect to {}: {}", address.toString(), std::strerror(error));
    }
    if (Clock::now() >= deadline) {
      fail(weftTimeout, "nobody listens at {} (bootstrap root), gave up after WEFT_TIMEOUT", address.toString());
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

Socket acceptBefore(const Socket& listener, Clock::time_point deadline) {
  for (;;) {
    pollfd p{listener.fd(), POLLIN, 0};
    int n = poll(&p, 1, millisecondsUntil(deadline));
    if (n > 0) {
      int fd = accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return Socket(fd);
      }
    }
    if (Clock::now() >= deadline) return Socket();
  }
}

void sendAll(const Socket& socket, const void* data, size_t bytes, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    waitFor(socket.fd(), POLLOUT, deadline, "sending");
    ssize_t n = send(socket.fd(), p, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) fail(weftRemoteError, "bootstrap peer closed the connection: {}", std::strerror(errno));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void recvAll(const Socket& socket, void* data, size_t bytes, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    waitFor(socket.fd(), POLLIN, deadline, "receiving");
    ssize_t n = recv(socket.fd(), p, bytes, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n == 0) fail(weftRemoteError, "bootstrap peer closed the connection");
    if (n < 0) fail(weftRemoteError, "bootstrap receive failed: {}", std::strerror(errno));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

Clock::time_point deadlineFromNow() {
  return Clock::now() + std::chrono::seconds(config::getInt("WEFT_TIMEOUT", 600));
}

}  // namespace weft
