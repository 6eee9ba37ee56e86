// The sender's side of connection setup: a non-blocking connect, retried while refused, then the hello.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "tcp_log.h"
#include "tcp_setup.h"
#include "tcp_socket.h"

namespace weft::tcp {

namespace {

// The peer listens before it publishes its handle, so a refusal is only retried briefly (~2.5 s in all).
constexpr int kMaxConnectAttempts = 10;

// How long the side whose listener handle sorts higher waits for the peer to open the pair's socket before
// it opens one of its own (the peer may never connect back: one-way traffic, as in a ring of 3 or more).
// Paid once per such connection, at its first use.
constexpr auto kOfferWait = std::chrono::milliseconds(5);

Clock::duration retryDelay(int attempts) {
  return std::min<Clock::duration>(std::chrono::milliseconds(10 << std::min(attempts, 6)),
                                   std::chrono::milliseconds(500));
}

// Handles a failed connect: schedules a retry (weftInProgress) or returns the error.
weftResult_t connectFailed(Context* ctx, PendingConnect& pc, int err) {
  pc.socket.reset();
  std::string peer = formatAddress(pc.addr);
  if (err == ECONNREFUSED && pc.attempts < kMaxConnectAttempts) {
    pc.stage = PendingConnect::Stage::Waiting;
    pc.retryAt = Clock::now() + retryDelay(pc.attempts);
    logf(ctx->host(), weftLogDebug, "connect to %s refused (attempt %d), retrying", peer.c_str(), pc.attempts);
    return weftInProgress;
  }
  logf(ctx->host(), weftLogError, "connect to %s failed after %d attempts: %s", peer.c_str(), pc.attempts,
       std::strerror(err));
  return resultOfErrno(err);
}

// Advances pc as far as it goes without blocking. weftInProgress: call again later.
weftResult_t advance(Context* ctx, PendingConnect& pc) {
  for (;;) {
    switch (pc.stage) {
      case PendingConnect::Stage::Waiting: {
        if (Clock::now() < pc.retryAt) return weftInProgress;
        std::string error;
        int fd = createSocket(pc.addr.ss_family, ctx->bufferBytes(), &error);
        if (fd < 0) {
          logf(ctx->host(), weftLogError, "connect to %s: %s", formatAddress(pc.addr).c_str(), error.c_str());
          return weftSystemError;
        }
        ctx->chooseCongestionFor(fd, "connection with " + formatAddress(pc.addr),
                                 isThisHost(pc.addr, ctx->iface().addr));
        try {
          pc.socket = std::make_unique<PolledSocket>(ctx, fd, POLLOUT);
        } catch (...) {
          closeFd(fd);
          throw;
        }
        ++pc.attempts;
        if (connect(fd, reinterpret_cast<const sockaddr*>(&pc.addr), pc.addrLen) == 0) {
          pc.stage = PendingConnect::Stage::SendingHello;
        } else if (errno == EINPROGRESS || errno == EINTR) {
          pc.stage = PendingConnect::Stage::Connecting;
        } else {
          weftResult_t r = connectFailed(ctx, pc, errno);
          if (r != weftInProgress) return r;
        }
        break;
      }
      case PendingConnect::Stage::Connecting: {
        pollfd p{pc.socket->fd(), POLLOUT, 0};
        int n = poll(&p, 1, 0);
        if (n == 0 || (n < 0 && errno == EINTR)) return weftInProgress;
        int err = 0;
        socklen_t len = sizeof(err);
        if (n < 0 || getsockopt(pc.socket->fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        if (err != 0) {
          weftResult_t r = connectFailed(ctx, pc, err);
          if (r != weftInProgress) return r;
          break;
        }
        pc.stage = PendingConnect::Stage::SendingHello;
        break;
      }
      case PendingConnect::Stage::SendingHello: {
        ssize_t n =
            send(pc.socket->fd(), pc.hello + pc.sent, pc.helloBytes - pc.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
          int err = errno;
          if (err == EINTR) break;
          if (err == EAGAIN || err == EWOULDBLOCK) return weftInProgress;
          logf(ctx->host(), weftLogError, "connect to %s: sending the hello failed: %s",
               formatAddress(pc.addr).c_str(), std::strerror(err));
          return resultOfErrno(err);
        }
        pc.sent += static_cast<size_t>(n);
        if (pc.sent == pc.helloBytes) return weftSuccess;
        break;
      }
    }
  }
}

// The peer's offer of a socket for this connection (its connection of the same pairKey came from the
// listener `handle` names), taken out of the listener's list; -1 when there is none yet.
int takeOffer(ListenComm* l, const unsigned char* handle, uint64_t pairKey) {
  std::lock_guard<std::mutex> lock(l->mutex);
  for (auto it = l->offered.begin(); it != l->offered.end(); ++it) {
    if (it->offer.pairKey == pairKey && std::memcmp(it->offer.listenerHandle, handle, kHandleUsedBytes) == 0) {
      int fd = it->fd;
      l->offered.erase(it);
      return fd;
    }
  }
  return -1;
}

// Once this side's offering connection is up, its listener also reads the socket, for the peer's hello.
void awaitReturn(Context* ctx, ListenComm* l, int fd, const sockaddr_storage& peer) {
  int back = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (back < 0) {
    logf(ctx->host(), weftLogDebug, "connect to %s: the socket is not read for the way back: %s",
         formatAddress(peer).c_str(), std::strerror(errno));
    return;
  }
  std::unique_ptr<PendingAccept> p;
  try {
    p = std::make_unique<PendingAccept>(ctx, back, peer, Clock::time_point::max());
  } catch (...) {
    closeFd(back);
    throw;
  }
  std::lock_guard<std::mutex> lock(l->mutex);
  l->returning.push_back(std::move(p));
}

// Both connects: `listener` null for a plain one.
weftResult_t connectWith(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                         ListenComm* listener, uint64_t pairKey, Connection** sendComm) {
  *sendComm = nullptr;
  std::lock_guard<std::mutex> lock(ctx->connectMutex);
  auto it = std::find_if(ctx->connects.begin(), ctx->connects.end(), [&](const auto& pc) {
    return pc->jobToken == jobToken && pc->connectorId == connectorId &&
           std::memcmp(pc->handle, handle, WEFT_NET_HANDLE_BYTES) == 0;
  });
  if (it == ctx->connects.end()) {
    auto pc = std::make_unique<PendingConnect>();
    if (!decodeHandle(handle, &pc->addr, &pc->addrLen)) {
      logf(ctx->host(), weftLogError, "connect: the handle is not a tcp handle of this version");
      return weftInvalidArgument;
    }
    std::memcpy(pc->handle, handle, WEFT_NET_HANDLE_BYTES);
    pc->jobToken = jobToken;
    pc->connectorId = connectorId;
    if (listener != nullptr) {
      pc->listener = listener;
      pc->pairKey = pairKey;
      encodeHello(jobToken, connectorId, pc->hello, kHelloOffersPair);
      encodePairOffer(pairKey, listener->handle, pc->hello + kHelloBytes);
      pc->helloBytes = kHelloBytes + kPairOfferBytes;
      bool peerOpens = std::memcmp(handle, listener->handle, kHandleUsedBytes) < 0;
      pc->offerAwaitedUntil = peerOpens ? Clock::now() + kOfferWait : Clock::now();
    } else {
      encodeHello(jobToken, connectorId, pc->hello);
    }
    ctx->connects.push_back(std::move(pc));
    it = ctx->connects.end() - 1;
  }
  PendingConnect& pc = **it;
  if (pc.listener != nullptr && !pc.joined && pc.socket == nullptr) {
    weftResult_t r = progressHellos(pc.listener);
    if (r != weftSuccess) {
      ctx->connects.erase(it);
      return r;
    }
    if (int fd = takeOffer(pc.listener, handle, pc.pairKey); fd >= 0) {
      try {
        pc.socket = std::make_unique<PolledSocket>(ctx, fd, POLLOUT);
      } catch (...) {
        closeFd(fd);
        throw;
      }
      pc.joined = true;
      pc.stage = PendingConnect::Stage::SendingHello;
      encodeHello(jobToken, connectorId, pc.hello);  // opens this direction; no offer back
      pc.helloBytes = kHelloBytes;
    } else if (Clock::now() < pc.offerAwaitedUntil) {
      return weftSuccess;
    }
  }
  weftResult_t result = advance(ctx, pc);
  if (result == weftInProgress) return weftSuccess;
  if (result == weftSuccess) {
    int fd = pc.socket->release();
    try {
      if (pc.listener != nullptr && !pc.joined) awaitReturn(ctx, pc.listener, fd, pc.addr);
      *sendComm = new Connection(ctx, fd, true, pc.addr);
    } catch (...) {
      closeFd(fd);
      ctx->connects.erase(it);
      throw;
    }
    logf(ctx->host(), weftLogDebug, "connected to %s (connector 0x%llx)%s", formatAddress(pc.addr).c_str(),
         static_cast<unsigned long long>(connectorId),
         pc.joined ? " on the socket of its connection to this side" : "");
  }
  ctx->connects.erase(it);
  return result;
}

}  // namespace

weftResult_t connectTo(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                       Connection** sendComm) {
  return connectWith(ctx, handle, jobToken, connectorId, nullptr, 0, sendComm);
}

weftResult_t connectPairedTo(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                             ListenComm* listener, uint64_t pairKey, Connection** sendComm) {
  return connectWith(ctx, handle, jobToken, connectorId, ctx->pairSockets ? listener : nullptr, pairKey, sendComm);
}

}  // namespace weft::tcp
