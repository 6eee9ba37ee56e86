// The receiver's side of connection setup: listening, accepting and checking the hello.
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "tcp_log.h"
#include "tcp_setup.h"
#include "tcp_socket.h"

namespace weft::tcp {

namespace {

constexpr auto kHelloTimeout = std::chrono::seconds(30);
constexpr size_t kMaxPendingAccepts = 4096;

enum class HelloStatus { Incomplete, Complete, Dropped };

HelloStatus readHello(Context* ctx, PendingAccept& p) {
  while (p.got < kHelloBytes) {
    ssize_t n = recv(p.socket.fd(), p.hello + p.got, kHelloBytes - p.got, MSG_DONTWAIT);
    if (n > 0) {
      p.got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      logf(ctx->host(), weftLogDebug, "connection from %s closed before its hello", formatAddress(p.peer).c_str());
      return HelloStatus::Dropped;
    }
    int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return HelloStatus::Incomplete;
    logf(ctx->host(), weftLogWarn, "connection from %s failed before its hello: %s", formatAddress(p.peer).c_str(),
         std::strerror(err));
    return HelloStatus::Dropped;
  }
  return HelloStatus::Complete;
}

}  // namespace

ListenComm::ListenComm(Context* c, int fd, uint64_t token, const sockaddr_storage& addr)
    : ctx(c), jobToken(token), address(formatAddress(addr)), socket(c, fd, POLLIN) {}

weftResult_t listenOn(Context* ctx, uint64_t jobToken, unsigned char* handle, ListenComm** listenComm) {
  const Interface& iface = ctx->iface();
  std::string error;
  int fd = createSocket(iface.addr.ss_family, ctx->bufferBytes(), &error);
  if (fd < 0) {
    logf(ctx->host(), weftLogError, "listen: %s", error.c_str());
    return weftSystemError;
  }
  sockaddr_storage addr = iface.addr;
  socklen_t len = iface.addrLen;
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0 || listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    logf(ctx->host(), weftLogError, "listen on %s (%s) failed: %s", formatAddress(iface.addr).c_str(),
         iface.name.c_str(), std::strerror(err));
    closeFd(fd);
    return weftSystemError;
  }
  ListenComm* l;
  try {
    l = new ListenComm(ctx, fd, jobToken, addr);
  } catch (...) {
    closeFd(fd);
    throw;
  }
  encodeHandle(addr, handle);
  logf(ctx->host(), weftLogDebug, "listening on %s", l->address.c_str());
  *listenComm = l;
  return weftSuccess;
}

weftResult_t acceptOne(ListenComm* l, Connection** recvComm, uint64_t* connectorId) {
  *recvComm = nullptr;
  Context* ctx = l->ctx;
  while (l->pending.size() < kMaxPendingAccepts) {
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    int fd = accept4(l->socket.fd(), reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) break;
      logf(ctx->host(), weftLogError, "accept on %s failed: %s", l->address.c_str(), std::strerror(err));
      return weftSystemError;
    }
    setNoDelay(fd);
    std::unique_ptr<PendingAccept> p;
    try {
      p = std::make_unique<PendingAccept>(ctx, fd, peer, Clock::now() + kHelloTimeout);
    } catch (...) {
      closeFd(fd);
      throw;
    }
    l->pending.push_back(std::move(p));  // when it throws, p closes fd
  }

  for (size_t i = 0; i < l->pending.size();) {
    PendingAccept& p = *l->pending[i];
    HelloStatus status = readHello(ctx, p);
    if (status == HelloStatus::Incomplete) {
      if (Clock::now() < p.deadline) {
        ++i;
        continue;
      }
      logf(ctx->host(), weftLogWarn, "refused connection from %s on %s: no hello within %lld s",
           formatAddress(p.peer).c_str(), l->address.c_str(),
           static_cast<long long>(std::chrono::seconds(kHelloTimeout).count()));
    } else if (status == HelloStatus::Complete) {
      Hello hello = decodeHello(p.hello);
      if (hello.magic != kHelloMagic || hello.version != kWireVersion) {
        logf(ctx->host(), weftLogWarn, "refused connection from %s on %s: not a weft tcp hello (version %u)",
             formatAddress(p.peer).c_str(), l->address.c_str(), static_cast<unsigned>(hello.version));
      } else if (!tokensEqual(hello.jobToken, l->jobToken)) {
        logf(ctx->host(), weftLogWarn, "refused connection from %s on %s: wrong job token",
             formatAddress(p.peer).c_str(), l->address.c_str());
      } else {
        int fd = p.socket.release();
        Connection* c;
        try {
          c = new Connection(ctx, fd, false, p.peer);
        } catch (...) {
          closeFd(fd);
          throw;
        }
        logf(ctx->host(), weftLogDebug, "accepted connection from %s (connector 0x%llx) on %s",
             formatAddress(p.peer).c_str(), static_cast<unsigned long long>(hello.connectorId),
             l->address.c_str());
        l->pending.erase(l->pending.begin() + static_cast<ptrdiff_t>(i));
        *recvComm = c;
        *connectorId = hello.connectorId;
        return weftSuccess;
      }
    }
    l->pending.erase(l->pending.begin() + static_cast<ptrdiff_t>(i));
  }
  return weftSuccess;
}

}  // namespace weft::tcp
