// Small blocking socket helpers for the bootstrap, each bounded by a deadline. The data path uses the
// transport plugins instead; this is only for finding each other.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace weft {

using Clock = std::chrono::steady_clock;

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string toString() const;
};

// Parses "host:port" or "[v6]:port"; throws weftInvalidArgument.
SocketAddress parseSocketAddress(const std::string& text);

// The address to listen on, port 0: the interface chosen by WEFT_SOCKET_IFNAME (comma list of name
// prefixes, ^ excludes, = exact), else the first up interface that is not loopback or docker, else
// loopback.
SocketAddress chooseBootstrapAddress();

// Owns a file descriptor.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();
  int fd() const { return fd_; }
  int release();

 private:
  int fd_ = -1;
};

// Listens on `address`; on return address holds the port the kernel chose.
Socket listenOn(SocketAddress& address, int backlog);
// Connects, retrying while the listener is not there yet, until the deadline.
Socket connectTo(const SocketAddress& address, Clock::time_point deadline);
// Accepts one connection or returns an invalid socket (fd -1) at the deadline.
Socket acceptBefore(const Socket& listener, Clock::time_point deadline);
// Whole-buffer transfers; throw weftRemoteError on a closed peer, weftTimeout at the deadline.
void sendAll(const Socket& socket, const void* data, size_t bytes, Clock::time_point deadline);
void recvAll(const Socket& socket, void* data, size_t bytes, Clock::time_point deadline);

// The deadline for a wait that starts now: WEFT_TIMEOUT seconds from now.
Clock::time_point deadlineFromNow();

}  // namespace weft
