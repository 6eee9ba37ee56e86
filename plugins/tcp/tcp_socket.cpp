#include "tcp_socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace weft::tcp {

int createSocket(int family, long long bufferBytes, std::string* error) {
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) {
    *error = std::string("socket() failed: ") + std::strerror(errno);
    return -1;
  }
  setNoDelay(fd);
  if (bufferBytes > 0) {
    int bytes = bufferBytes > INT_MAX ? INT_MAX : static_cast<int>(bufferBytes);
    // Best effort: the kernel caps the sizes at net.core.{w,r}mem_max.
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
  }
  return fd;
}

void setNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void watchLiveness(int fd, int deadSeconds) {
  if (deadSeconds <= 0) return;
  int one = 1;
  int idle = deadSeconds > 1 ? deadSeconds / 2 : 1;
  int interval = 1;
  int probes = deadSeconds - idle > 1 ? deadSeconds - idle : 1;
  // Best effort, like the buffer sizes: a kernel without one of these still works, with longer detection.
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
}

weftResult_t resultOfErrno(int err) {
  switch (err) {
    case ECONNRESET:
    case ECONNREFUSED:
    case ECONNABORTED:
    case EPIPE:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETUNREACH:
    case ENETDOWN:
    case ENETRESET:
      return weftRemoteError;
    default:
      return weftSystemError;
  }
}

void closeFd(int fd) {
  if (fd < 0) return;
  int saved = errno;
  close(fd);
  errno = saved;
}

}  // namespace weft::tcp
