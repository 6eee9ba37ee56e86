#include "tcp_conn.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdarg>
#include <cstdio>

#include "tcp_log.h"
#include "tcp_socket.h"

namespace weft::tcp {
namespace {
// Idle tests between two looks at the clock for the liveness check, as in the shm plugin: a small message's
// wait tests its request a few dozen times, and a clock read each time would cost more than the check saves.
constexpr uint32_t kIdleTestsPerClockRead = 16;
}  // namespace

Connection::Connection(Context* ctx, int fd, bool isSend, const sockaddr_storage& peer)
    : ctx_(ctx), isSend_(isSend), peer_(formatAddress(peer)), socket_(ctx, fd, 0) {
  watchLiveness(fd, ctx->deadPeerSeconds());
}

Connection::~Connection() {
  if (requests_.outstanding() > 0) {
    logf(ctx_->host(), weftLogDebug, "closing %s connection with %s with %zu requests outstanding",
         isSend_ ? "send" : "receive", peer_.c_str(), requests_.outstanding());
  }
}

weftResult_t Connection::post(void* data, size_t size, uint32_t tag, void** request) {
  if (error_ != weftSuccess) return error_;
  Request* r = newRequest(size, tag);
  r->single = {data, size};
  r->pieces = &r->single;
  r->count = 1;
  enqueue(r, request);
  return weftSuccess;
}

weftResult_t Connection::postv(const weftTransportIov_v1* iov, int count, size_t size, uint32_t tag,
                               void** request) {
  if (error_ != weftSuccess) return error_;
  Request* r = newRequest(size, tag);
  r->pieces = iov;
  r->count = count;
  enqueue(r, request);
  return weftSuccess;
}

Request* Connection::newRequest(size_t size, uint32_t tag) {
  Request* r = requests_.push(this, size, tag, isSend_);
  if (isSend_) encodeHeader(tag, size, r->header);
  return r;
}

void Connection::enqueue(Request* r, void** request) {
  // Start right away when nothing is ahead; otherwise the next test() sends the queue together.
  if (requests_.head() == r) progress();
  *request = r;
}

weftResult_t Connection::test(Request* r, int* done, size_t* size) {
  if (r->state == RequestState::Active) progress();
  if (r->state == RequestState::Active && ++idleTests_ >= kIdleTestsPerClockRead) {
    idleTests_ = 0;
    auto now = std::chrono::steady_clock::now();
    if (now >= nextLivenessCheck_) {
      nextLivenessCheck_ = now + std::chrono::seconds(1);
      checkPeerAnswers();
    }
  }
  return requests_.report(r, done, size);
}

void Connection::progress() {
  if (isSend_) {
    progressSend();
  } else {
    progressRecv();
  }
}

void Connection::checkPeerAnswers() {
  const int deadSeconds = ctx_->deadPeerSeconds();
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (deadSeconds <= 0 || getsockopt(socket_.fd(), IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return;
  // A live peer's kernel acknowledges retransmissions and answers window and keepalive probes, however busy
  // its process is; silence with something outstanding means its host is gone or cut off.
  const bool outstanding = info.tcpi_unacked > 0 || info.tcpi_probes > 0;
  if (outstanding && info.tcpi_last_ack_recv >= static_cast<unsigned>(deadSeconds) * 1000U) {
    fail(weftRemoteError,
         "its host has acknowledged nothing for %u ms (%u segments unacknowledged, %u probes): "
         "gone or unreachable (WEFT_SOCKET_DEAD_PEER=%d)",
         info.tcpi_last_ack_recv, info.tcpi_unacked, static_cast<unsigned>(info.tcpi_probes), deadSeconds);
  }
}

void Connection::fail(weftResult_t result, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  logf(ctx_->host(), weftLogWarn, "%s %s: %s", isSend_ ? "send to" : "receive from", peer_.c_str(), message);
  error_ = result;
  requests_.failAll(result);
  // The stream is out of step (or gone): tell the peer rather than leave it waiting.
  shutdown(socket_.fd(), SHUT_RDWR);
  socket_.want(0);
}

}  // namespace weft::tcp
