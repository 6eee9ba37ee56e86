// The receiver's side of connection setup: listening, accepting, checking the hello and mapping the
// connector's segment and doorbell, deciding on CMA, replying.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "shm_cma.h"
#include "shm_log.h"
#include "shm_setup.h"
#include "shm_socket.h"

namespace weft::shm {

namespace {

constexpr auto kHelloTimeout = std::chrono::seconds(30);
constexpr size_t kMaxPendingAccepts = 4096;

bool validRingBytes(uint64_t bytes) {
  return bytes >= kMinRingBytes && bytes <= kMaxRingBytes && (bytes & (bytes - 1)) == 0;
}

// Whether large messages from this connector can be read by CMA.
bool decideCma(Context* ctx, const Hello& hello, pid_t pid) {
  if ((hello.flags & kHelloOffersCma) == 0 || !ctx->cmaEnabled()) return false;  // either side said no
  if (pid <= 0) {
    ctx->cmaUnavailable("the connector's pid is unknown");
    return false;
  }
  if (int err = cmaProbe(pid, hello.probeAddress, hello.probeValue); err != 0) {
    if (err == ESRCH) return false;  // the connector is gone already: that says nothing about CMA
    ctx->cmaUnavailable("process_vm_readv from pid " + std::to_string(pid) + ": " + std::strerror(err));
    return false;
  }
  return true;
}

// Builds the receive connection for a hello that arrived with fds (which it closes). Null when refused.
Connection* admit(ListenComm* l, PendingAccept& p, const unsigned char* data, ssize_t bytes, bool truncated,
                  int* fds, int nfds, uint64_t* connectorId) {
  Context* ctx = l->ctx;
  struct Closer {
    int* fds;
    int n;
    ~Closer() { closeFds(fds, n); }
  } closer{fds, nfds};  // the mappings keep what they need
  pid_t pid = peerPid(p.socket.fd());
  Hello hello = decodeHello(data);
  if (static_cast<size_t>(bytes) != kHelloBytes || truncated || hello.magic != kHelloMagic ||
      hello.version != kWireVersion) {
    logf(ctx->host(), weftLogWarn, "refused connection from pid %d on @%s: not a weft shm hello (version %u)",
         static_cast<int>(pid), l->name.c_str(), static_cast<unsigned>(hello.version));
    return nullptr;
  }
  if (!tokensEqual(hello.jobToken, l->jobToken)) {
    logf(ctx->host(), weftLogWarn, "refused connection from pid %d on @%s: wrong job token", static_cast<int>(pid),
         l->name.c_str());
    return nullptr;
  }
  if (nfds != 2 || !validRingBytes(hello.ringBytes)) {
    logf(ctx->host(), weftLogWarn, "refused connection from pid %d on @%s: bad hello (%d fds, ring of %llu bytes)",
         static_cast<int>(pid), l->name.c_str(), nfds, static_cast<unsigned long long>(hello.ringBytes));
    return nullptr;
  }
  Endpoint ep;
  std::string error;
  if (!mapPeerSegment(fds[0], segmentBytes(hello.ringBytes), &ep.segment, &error) ||
      !mapPeerSegment(fds[1], kDoorbellBytes, &ep.peerDoorbell, &error)) {
    logf(ctx->host(), weftLogWarn, "refused connection from pid %d on @%s: %s", static_cast<int>(pid),
         l->name.c_str(), error.c_str());
    return nullptr;
  }
  const auto* segment = static_cast<const SegmentHeader*>(ep.segment.data());
  const auto* doorbell = static_cast<const DoorbellPage*>(ep.peerDoorbell.data());
  if (segment->magic != kSegmentMagic || segment->version != kSegmentVersion ||
      segment->ringBytes != hello.ringBytes || doorbell->magic != kDoorbellMagic) {
    logf(ctx->host(), weftLogWarn, "refused connection from pid %d on @%s: its segment is not a weft shm ring",
         static_cast<int>(pid), l->name.c_str());
    return nullptr;
  }
  ep.ringBytes = hello.ringBytes;
  ep.peerPid = pid;
  ep.cma = decideCma(ctx, hello, pid);
  unsigned char reply[kReplyBytes];
  encodeReply(ep.cma ? kReplyUsesCma : 0, static_cast<uint32_t>(getpid()), reply);
  int doorbellFd = ctx->doorbellFd();
  if (sendWithFds(p.socket.fd(), reply, kReplyBytes, &doorbellFd, 1) < 0) {
    int err = errno;
    if (err != EPIPE && err != ECONNRESET) {
      logf(ctx->host(), weftLogWarn, "dropped connection from pid %d on @%s: sending the reply failed: %s",
           static_cast<int>(pid), l->name.c_str(), std::strerror(err));
      return nullptr;
    }
    // The connector has closed already: it wrote what it had into the ring and left, as a sender may before
    // the receiver gets round to accepting. What it wrote is ours to read; the connection fails after that.
    logf(ctx->host(), weftLogDebug, "connection from pid %d on @%s was closed by the connector before accept",
         static_cast<int>(pid), l->name.c_str());
  }
  // Wakes the connector should it sleep waiting for this reply (a large message cannot start without it).
  ringDoorbell(static_cast<DoorbellPage*>(ep.peerDoorbell.data()));
  ep.pidfd = ep.cma ? openPidfd(pid) : -1;
  ep.socket = p.socket.release();
  int socketFd = ep.socket;
  int pidfd = ep.pidfd;
  bool cma = ep.cma;
  Connection* c;
  try {
    c = new Connection(ctx, false, std::move(ep));
  } catch (...) {
    closeFd(socketFd);
    closeFd(pidfd);
    throw;
  }
  logf(ctx->host(), weftLogDebug, "accepted connection from pid %d (connector 0x%llx) on @%s; large messages %s",
       static_cast<int>(pid), static_cast<unsigned long long>(hello.connectorId), l->name.c_str(),
       cma ? "by CMA" : "through the segment");
  *connectorId = hello.connectorId;
  return c;
}

}  // namespace

ListenComm::ListenComm(Context* c, int fd, uint64_t token, std::string socketName)
    : ctx(c), jobToken(token), name(std::move(socketName)), socket(c, fd, POLLIN) {}

weftResult_t listenOn(Context* ctx, uint64_t jobToken, unsigned char* handle, ListenComm** listenComm) {
  std::string name;
  std::string error;
  if (!randomSocketName(&name, &error)) {
    logf(ctx->host(), weftLogError, "listen: %s", error.c_str());
    return weftSystemError;
  }
  int fd = listenAbstract(name, &error);
  if (fd < 0) {
    logf(ctx->host(), weftLogError, "listen: %s", error.c_str());
    return weftSystemError;
  }
  ListenComm* l;
  try {
    l = new ListenComm(ctx, fd, jobToken, name);
  } catch (...) {
    closeFd(fd);
    throw;
  }
  encodeHandle(name, static_cast<uint32_t>(getpid()), handle);
  logf(ctx->host(), weftLogDebug, "listening on @%s", name.c_str());
  *listenComm = l;
  return weftSuccess;
}

weftResult_t acceptOne(ListenComm* l, Connection** recvComm, uint64_t* connectorId) {
  *recvComm = nullptr;
  Context* ctx = l->ctx;
  while (l->pending.size() < kMaxPendingAccepts) {
    int fd = accept4(l->socket.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) break;
      logf(ctx->host(), weftLogError, "accept on @%s failed: %s", l->name.c_str(), std::strerror(err));
      return weftSystemError;
    }
    std::unique_ptr<PendingAccept> p;
    try {
      p = std::make_unique<PendingAccept>(ctx, fd, Clock::now() + kHelloTimeout);
    } catch (...) {
      closeFd(fd);
      throw;
    }
    l->pending.push_back(std::move(p));  // when it throws, p closes fd
  }

  for (size_t i = 0; i < l->pending.size();) {
    PendingAccept& p = *l->pending[i];
    unsigned char hello[kHelloBytes + 1];
    int fds[2];
    int nfds = 0;
    bool truncated = false;
    ssize_t n = recvWithFds(p.socket.fd(), hello, sizeof(hello), fds, 2, &nfds, &truncated);
    Connection* c = nullptr;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Clock::now() < p.deadline) {
        ++i;
        continue;
      }
      logf(ctx->host(), weftLogWarn, "refused connection from pid %d on @%s: no hello within %lld s",
           static_cast<int>(peerPid(p.socket.fd())), l->name.c_str(),
           static_cast<long long>(std::chrono::seconds(kHelloTimeout).count()));
    } else if (n < 0) {
      logf(ctx->host(), weftLogWarn, "connection on @%s failed before its hello: %s", l->name.c_str(),
           std::strerror(errno));
    } else if (n == 0) {
      closeFds(fds, nfds);
      logf(ctx->host(), weftLogDebug, "connection on @%s closed before its hello", l->name.c_str());
    } else {
      c = admit(l, p, hello, n, truncated, fds, nfds, connectorId);
    }
    l->pending.erase(l->pending.begin() + static_cast<ptrdiff_t>(i));
    if (c != nullptr) {
      *recvComm = c;
      return weftSuccess;
    }
  }
  return weftSuccess;
}

}  // namespace weft::shm
