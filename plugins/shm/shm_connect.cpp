// The sender's side of connection setup: create the segment, connect the Unix socket, send the hello.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "shm_log.h"
#include "shm_setup.h"
#include "shm_socket.h"

namespace weft::shm {

namespace {

weftResult_t start(Context* ctx, PendingConnect& pc) {
  std::string error;
  size_t bytes = segmentBytes(ctx->ringBytes());
  pc.segmentFd = createSegment("weft-shm-ring", bytes, &pc.segment, &error);
  if (pc.segmentFd < 0) {
    logf(ctx->host(), weftLogError, "connect to @%s: %s", pc.peer.name.c_str(), error.c_str());
    return weftSystemError;
  }
  // A fresh memfd reads as zeros: head, tail and cmaDone start at 0.
  auto* header = static_cast<SegmentHeader*>(pc.segment.data());
  header->magic = kSegmentMagic;
  header->version = kSegmentVersion;
  header->ringBytes = ctx->ringBytes();
  header->stampKey = randomWord(header);
  Hello hello;
  hello.flags = ctx->cmaEnabled() ? kHelloOffersCma : 0;
  hello.jobToken = pc.jobToken;
  hello.connectorId = pc.connectorId;
  hello.pid = static_cast<uint32_t>(getpid());
  hello.ringBytes = ctx->ringBytes();
  hello.probeAddress = ctx->probeAddress();
  hello.probeValue = ctx->probeValue();
  encodeHello(hello, pc.hello);
  return weftSuccess;
}

// Advances pc as far as it goes without blocking. weftInProgress: call again later.
weftResult_t advance(Context* ctx, PendingConnect& pc) {
  if (pc.socket == nullptr) {
    int fd = connectAbstract(pc.peer.name);
    if (fd < 0) {
      int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return weftInProgress;  // the listener's backlog is full
      if (err == ECONNREFUSED || err == ENOENT) {
        logf(ctx->host(), weftLogError,
             "connect to @%s (listener pid %u): nobody listens there (the listener closed, or is in another "
             "network namespace)",
             pc.peer.name.c_str(), pc.peer.pid);
        return weftRemoteError;
      }
      logf(ctx->host(), weftLogError, "connect to @%s failed: %s", pc.peer.name.c_str(), std::strerror(err));
      return weftSystemError;
    }
    try {
      pc.socket = std::make_unique<PolledSocket>(ctx, fd, POLLOUT);
    } catch (...) {
      closeFd(fd);
      throw;
    }
  }
  const int fds[2] = {pc.segmentFd, ctx->doorbellFd()};
  if (sendWithFds(pc.socket->fd(), pc.hello, kHelloBytes, fds, 2) < 0) {
    int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK) return weftInProgress;
    logf(ctx->host(), weftLogError, "connect to @%s: sending the hello failed: %s", pc.peer.name.c_str(),
         std::strerror(err));
    return err == EPIPE || err == ECONNRESET || err == ECONNREFUSED ? weftRemoteError : weftSystemError;
  }
  return weftSuccess;
}

}  // namespace

PendingConnect::~PendingConnect() { closeFd(segmentFd); }

weftResult_t connectTo(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                       Connection** sendComm) {
  *sendComm = nullptr;
  std::lock_guard<std::mutex> lock(ctx->connectMutex);
  auto it = std::find_if(ctx->connects.begin(), ctx->connects.end(), [&](const auto& pc) {
    return pc->jobToken == jobToken && pc->connectorId == connectorId &&
           std::memcmp(pc->handle, handle, WEFT_NET_HANDLE_BYTES) == 0;
  });
  if (it == ctx->connects.end()) {
    auto pc = std::make_unique<PendingConnect>();
    if (!decodeHandle(handle, &pc->peer)) {
      logf(ctx->host(), weftLogError, "connect: the handle is not an shm handle of this version");
      return weftInvalidArgument;
    }
    std::memcpy(pc->handle, handle, WEFT_NET_HANDLE_BYTES);
    pc->jobToken = jobToken;
    pc->connectorId = connectorId;
    if (weftResult_t r = start(ctx, *pc); r != weftSuccess) return r;
    ctx->connects.push_back(std::move(pc));
    it = ctx->connects.end() - 1;
  }
  PendingConnect& pc = **it;
  weftResult_t result = advance(ctx, pc);
  if (result == weftInProgress) return weftSuccess;
  if (result == weftSuccess) {
    Endpoint ep;
    ep.socket = pc.socket->release();
    ep.segment = std::move(pc.segment);
    ep.ringBytes = ctx->ringBytes();
    ep.peerPid = peerPid(ep.socket);
    int fd = ep.socket;
    try {
      *sendComm = new Connection(ctx, true, std::move(ep));
    } catch (...) {
      closeFd(fd);
      ctx->connects.erase(it);
      throw;
    }
    logf(ctx->host(), weftLogDebug, "connected to @%s (pid %d, connector 0x%llx)", pc.peer.name.c_str(),
         static_cast<int>((*sendComm)->peerPid()), static_cast<unsigned long long>(connectorId));
  }
  ctx->connects.erase(it);  // also closes our copy of the segment's fd: the receiver and the mapping hold it
  return result;
}

}  // namespace weft::shm
