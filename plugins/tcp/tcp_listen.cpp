// The receiver's side of connection setup: listening, accepting and checking the hello.
#include <fcntl.h>
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

// Reads the hello, and the pair offer after it when its flags announce one and `offerAllowed`. Never reads
// past them: what follows is the connection's first message.
HelloStatus readHello(Context* ctx, PendingAccept& p, bool offerAllowed) {
  for (;;) {
    size_t want = kHelloBytes;
    if (p.got >= kHelloBytes) {
      Hello hello = decodeHello(p.hello);
      bool offers = hello.magic == kHelloMagic && (hello.flags & kHelloOffersPair) != 0 && offerAllowed;
      want = offers ? kHelloBytes + kPairOfferBytes : kHelloBytes;
    }
    if (p.got == want) return HelloStatus::Complete;
    ssize_t n = recv(p.socket.fd(), p.hello + p.got, want - p.got, MSG_DONTWAIT);
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
}

// Checks a complete hello; files the connection under `arrived` (and its offer under `offered`) when it is
// one of this job's, else logs the refusal and leaves the socket to the caller, who drops it.
void fileHello(ListenComm* l, PendingAccept& p, bool offerAllowed) {
  Context* ctx = l->ctx;
  Hello hello = decodeHello(p.hello);
  std::string from = formatAddress(p.peer);
  if (hello.magic != kHelloMagic || hello.version != kWireVersion) {
    logf(ctx->host(), weftLogWarn, "refused connection from %s on %s: not a weft tcp hello (version %u)",
         from.c_str(), l->address.c_str(), static_cast<unsigned>(hello.version));
    return;
  }
  if (!tokensEqual(hello.jobToken, l->jobToken)) {
    logf(ctx->host(), weftLogWarn, "refused connection from %s on %s: wrong job token", from.c_str(),
         l->address.c_str());
    return;
  }
  int fd = p.socket.release();
  l->arrived.push_back({fd, p.peer, hello.connectorId});
  if (offerAllowed && (hello.flags & kHelloOffersPair) != 0) {
    // A second descriptor, so that the send connection and the receive connection close independently.
    int back = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (back < 0) {
      logf(ctx->host(), weftLogDebug, "connection from %s: not kept for the way back: %s", from.c_str(),
           std::strerror(errno));
    } else {
      l->offered.push_back({back, decodePairOffer(p.hello + kHelloBytes)});
    }
  }
  logf(ctx->host(), weftLogDebug, "accepted connection from %s (connector 0x%llx) on %s%s", from.c_str(),
       static_cast<unsigned long long>(hello.connectorId), l->address.c_str(),
       offerAllowed ? "" : ", on the socket of this side's own connection");
}

// Moves the hellos of `list` along: complete ones are filed, refused or failed ones dropped, and pending
// ones past their deadline refused.
void progressList(ListenComm* l, std::vector<std::unique_ptr<PendingAccept>>& list, bool offerAllowed) {
  for (size_t i = 0; i < list.size();) {
    PendingAccept& p = *list[i];
    HelloStatus status = readHello(l->ctx, p, offerAllowed);
    if (status == HelloStatus::Incomplete) {
      if (Clock::now() < p.deadline) {
        ++i;
        continue;
      }
      logf(l->ctx->host(), weftLogWarn, "refused connection from %s on %s: no hello within %lld s",
           formatAddress(p.peer).c_str(), l->address.c_str(),
           static_cast<long long>(std::chrono::seconds(kHelloTimeout).count()));
    } else if (status == HelloStatus::Complete) {
      fileHello(l, p, offerAllowed);
    }
    list.erase(list.begin() + static_cast<ptrdiff_t>(i));
  }
}

}  // namespace

ListenComm::ListenComm(Context* c, int fd, uint64_t token, const sockaddr_storage& addr)
    : ctx(c), jobToken(token), address(formatAddress(addr)), socket(c, fd, POLLIN) {
  encodeHandle(addr, handle);
}

ListenComm::~ListenComm() {
  for (const ArrivedConnection& a : arrived) closeFd(a.fd);
  for (const OfferedSocket& o : offered) closeFd(o.fd);
  // A connect still waiting for this listener's offers goes on as a plain one.
  std::lock_guard<std::mutex> lock(ctx->connectMutex);
  for (const auto& pc : ctx->connects) {
    if (pc->listener == this) pc->listener = nullptr;
  }
}

weftResult_t listenOn(Context* ctx, uint64_t jobToken, unsigned char* handle, ListenComm** listenComm) {
  const Interface& iface = ctx->iface();
  std::string error;
  int fd = createSocket(iface.addr.ss_family, ctx->bufferBytes(), &error);
  if (fd < 0) {
    logf(ctx->host(), weftLogError, "listen: %s", error.c_str());
    return weftSystemError;
  }
  ctx->chooseCongestionFor(fd, "listener", true);
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
  std::memcpy(handle, l->handle, WEFT_NET_HANDLE_BYTES);
  logf(ctx->host(), weftLogDebug, "listening on %s", l->address.c_str());
  *listenComm = l;
  return weftSuccess;
}

weftResult_t progressHellos(ListenComm* l) {
  Context* ctx = l->ctx;
  std::lock_guard<std::mutex> lock(l->mutex);
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
    ctx->restoreCongestionBetweenHosts(fd, formatAddress(peer));
    std::unique_ptr<PendingAccept> p;
    try {
      p = std::make_unique<PendingAccept>(ctx, fd, peer, Clock::now() + kHelloTimeout);
    } catch (...) {
      closeFd(fd);
      throw;
    }
    l->pending.push_back(std::move(p));  // when it throws, p closes fd
  }
  progressList(l, l->pending, true);
  progressList(l, l->returning, false);
  return weftSuccess;
}

weftResult_t acceptOne(ListenComm* l, Connection** recvComm, uint64_t* connectorId) {
  *recvComm = nullptr;
  if (weftResult_t r = progressHellos(l); r != weftSuccess) return r;
  std::lock_guard<std::mutex> lock(l->mutex);
  if (l->arrived.empty()) return weftSuccess;
  ArrivedConnection a = l->arrived.front();
  l->arrived.erase(l->arrived.begin());
  try {
    *recvComm = new Connection(l->ctx, a.fd, false, a.peer);
  } catch (...) {
    closeFd(a.fd);
    throw;
  }
  *connectorId = a.connectorId;
  return weftSuccess;
}

}  // namespace weft::tcp
