#include "shm_conn.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "shm_cma.h"
#include "shm_log.h"
#include "shm_socket.h"
#include "shm_wire.h"

namespace weft::shm {

namespace {
// How often an idle test() asks the socket whether the peer is still there: often enough to fail within a
// few milliseconds of a peer's death, rarely enough that a spinning caller does not live in poll().
constexpr auto kPeerCheckInterval = std::chrono::milliseconds(1);
// Idle tests between two looks at the clock: a clock read costs 30 ns on a 2-vCPU VM, and a small message's
// wait tests its request a few dozen times (sendrecv ring of 8 B at np 2: the clock was 15 % of the time).
// A caller that waits longer yields or sleeps between tests, so the peer check still comes within the interval
// and a few dozen sleeps.
constexpr uint32_t kIdleTestsPerClockRead = 16;

// Publishing the head (or tail) every this many bytes of a long message lets the other side copy out while
// we still copy in, without paying a shared cache-line write per small piece.
constexpr uint64_t kPublishBytes = uint64_t{256} << 10;
}  // namespace

Connection::Connection(Context* ctx, bool isSend, Endpoint&& ep)
    : ctx_(ctx),
      isSend_(isSend),
      peerPid_(ep.peerPid),
      socket_(ctx, ep.socket, 0),
      pidfd_(ep.pidfd),
      segment_(std::move(ep.segment)),
      ring_(segment_.data(), ep.ringBytes),
      peerDoorbellMap_(std::move(ep.peerDoorbell)),
      peerDoorbell_(static_cast<DoorbellPage*>(peerDoorbellMap_.data())),
      replied_(!isSend),
      cma_(ep.cma),
      publishStep_(std::min<uint64_t>(kPublishBytes, ep.ringBytes / 4)) {
  // The sender alone writes the ring, and nothing is in it before its first send.
  touchPages(static_cast<unsigned char*>(segment_.data()) + kSegmentHeaderBytes, ep.ringBytes, isSend);
  try {
    ctx_->add(this);
  } catch (...) {
    socket_.release();  // the caller still owns the socket and the pidfd
    pidfd_ = -1;
    throw;
  }
}

Connection::~Connection() {
  ctx_->remove(this);  // before the segment goes: waitReady may be looking at it
  if (requests_.outstanding() > 0) {
    logf(ctx_->host(), weftLogDebug, "closing %s connection with pid %d with %zu requests outstanding",
         isSend_ ? "send" : "receive", static_cast<int>(peerPid_), requests_.outstanding());
  }
  // shutdown, not only close: a forked child may hold a copy of the socket, and the peer must see us go.
  shutdown(socket_.fd(), SHUT_RDWR);
  ringDoorbell(peerDoorbell_);
  closeFd(pidfd_);
}

weftResult_t Connection::post(void* data, size_t size, uint32_t tag, void** request) {
  if (error_ != weftSuccess) return error_;
  Request* r = requests_.push(this, size, tag, isSend_);
  r->data = static_cast<unsigned char*>(data);
  enqueue(r, request);
  return weftSuccess;
}

weftResult_t Connection::postv(const weftTransportIov_v1* iov, int count, size_t size, uint32_t tag,
                               void** request) {
  if (count == 1) return post(iov[0].data, size, tag, request);
  if (error_ != weftSuccess) return error_;
  Request* r = requests_.push(this, size, tag, isSend_);
  r->pieces = iov;
  r->count = count;
  enqueue(r, request);
  return weftSuccess;
}

void Connection::enqueue(Request* r, void** request) {
  // Start right away when nothing is ahead; otherwise the next test() moves the queue together.
  bool first = isSend_ ? cursor_ == nullptr : requests_.head() == r;
  if (isSend_ && cursor_ == nullptr) cursor_ = r;
  if (first) progress();
  *request = r;
}

weftResult_t Connection::test(Request* r, int* done, size_t* size) {
  if (r->state == RequestState::Active) {
    const bool moved = progress();
    // Only a connection that moved nothing and still holds r asks whether its peer lives: progress() may
    // have completed r, or failed it (and then reports no progress).
    if (!moved && r->state == RequestState::Active) checkPeer();
  }
  return requests_.report(r, done, size);
}

bool Connection::progress() {
  if (error_ != weftSuccess) return false;
  // While we are in here, the connection is nothing for another thread's waitReady to return for; and only our
  // own waitReady looks at it afterwards: another thread returning for it would only spin until we come.
  noteWaiting(0);
  owner_.store(pthread_self(), std::memory_order_relaxed);
  bool moved = isSend_ ? progressSend() : progressRecv();
  if (error_ == weftSuccess) socket_.want(requests_.head() != nullptr ? POLLIN | POLLRDHUP : 0);
  return moved;
}

bool Connection::mayProgress() const {
  uint8_t mask = waitMask_.load(std::memory_order_relaxed);
  if (mask == 0 || !pthread_equal(owner_.load(std::memory_order_relaxed), pthread_self())) return false;
  const SegmentHeader* h = ring_.header();
  return ((mask & kWaitData) != 0 &&
          h->head.load(std::memory_order_acquire) != seenHead_.load(std::memory_order_relaxed)) ||
         ((mask & kWaitSpace) != 0 &&
          h->tail.load(std::memory_order_acquire) != seenTail_.load(std::memory_order_relaxed)) ||
         ((mask & kWaitCma) != 0 &&
          h->cmaDone.load(std::memory_order_acquire) != seenCmaDone_.load(std::memory_order_relaxed));
}

void Connection::noteWaiting(uint8_t mask) { waitMask_.store(mask, std::memory_order_relaxed); }

void Connection::checkPeer() {
  if (error_ != weftSuccess) return;
  if (!peerGone_) {
    if (++idleTests_ < kIdleTestsPerClockRead) return;
    idleTests_ = 0;
    auto now = std::chrono::steady_clock::now();
    if (now - lastPeerCheck_ < kPeerCheckInterval) return;
    lastPeerCheck_ = now;
    SocketState state = socketState(socket_.fd());
    if (state == SocketState::Quiet) return;
    // The reply may wait in front of the end of stream (the acceptor replied, then closed).
    if (isSend_ && !replied_ && readReply()) {
      progress();
      return;
    }
    if (error_ != weftSuccess) return;
    if (state == SocketState::Readable) {
      // After the handshake the peer sends nothing: what is readable is the end of the stream (or junk).
      char byte;
      ssize_t n = recv(socket_.fd(), &byte, 1, MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    }
    peerGone_ = true;
  }
  // What the peer published before it went is still in the ring: deliver it, then fail what never can be.
  progress();
  if (error_ == weftSuccess && requests_.head() != nullptr) {
    if (isSend_ && !replied_) {
      fail(weftRemoteError,
           "the listener closed the connection before accepting it (wrong job token, or it exited)");
    } else {
      fail(weftRemoteError, "the peer process (pid %d) closed the connection or exited",
           static_cast<int>(peerPid_));
    }
  }
}

bool Connection::readReply() {
  unsigned char reply[kReplyBytes + 1];
  int fds[2];
  int nfds = 0;
  bool truncated = false;
  ssize_t n = recvWithFds(socket_.fd(), reply, sizeof(reply), fds, 2, &nfds, &truncated);
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK) peerGone_ = true;
    return false;
  }
  if (n == 0) {
    peerGone_ = true;
    return false;
  }
  if (static_cast<size_t>(n) != kReplyBytes || truncated || nfds != 1 || getLe(reply, 4) != kReplyMagic ||
      getLe(reply + 4, 2) != kWireVersion) {
    closeFds(fds, nfds);
    fail(weftRemoteError, "the acceptor's reply is not a weft shm reply of version %u", unsigned{kWireVersion});
    return false;
  }
  std::string error;
  bool mapped = mapPeerSegment(fds[0], kDoorbellBytes, &peerDoorbellMap_, &error);
  closeFd(fds[0]);
  if (!mapped) {
    fail(weftRemoteError, "the acceptor's doorbell: %s", error.c_str());
    return false;
  }
  auto* doorbell = static_cast<DoorbellPage*>(peerDoorbellMap_.data());
  if (doorbell->magic != kDoorbellMagic) {
    fail(weftRemoteError, "the acceptor's doorbell is not a weft shm doorbell");
    return false;
  }
  peerDoorbell_ = doorbell;
  cma_ = (getLe(reply + 6, 2) & kReplyUsesCma) != 0;
  replied_ = true;
  logf(ctx_->host(), weftLogDebug, "connection to pid %d accepted; large messages %s", static_cast<int>(peerPid_),
       cma_ ? "by CMA" : "through the segment");
  // Whatever we published before we knew whom to wake.
  ringDoorbell(peerDoorbell_);
  return true;
}

void Connection::fail(weftResult_t result, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  logf(ctx_->host(), weftLogWarn, "%s pid %d: %s", isSend_ ? "send to" : "receive from",
       static_cast<int>(peerPid_), message);
  error_ = result;
  requests_.failAll(result);
  cursor_ = nullptr;
  noteWaiting(0);
  // The stream is out of step (or gone): tell the peer rather than leave it waiting.
  shutdown(socket_.fd(), SHUT_RDWR);
  socket_.want(0);
  ringDoorbell(peerDoorbell_);
}

}  // namespace weft::shm
