// An established connection (send or receive side) and its in-order queue of requests.
#ifndef WEFT_PLUGINS_TCP_CONN_H
#define WEFT_PLUGINS_TCP_CONN_H

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/request_queue.h"
#include "tcp_context.h"
#include "tcp_wire.h"

namespace weft::tcp {

class Connection;

using plugins::RequestState;

struct Request {
  Connection* conn = nullptr;
  Request* next = nullptr;  // in the connection's queue or free list
  RequestState state = RequestState::Free;
  // The user's buffers, in message order (only read for a send): the caller's array for isendv/irecvv,
  // else `single`.
  const weftTransportIov_v1* pieces = nullptr;
  int count = 0;
  weftTransportIov_v1 single = {};
  size_t size = 0;    // bytes posted: the sum of the pieces' sizes
  size_t length = 0;  // bytes of the message: posted (send) or from the header (receive)
  uint32_t tag = 0;
  size_t headerDone = 0;
  size_t payloadDone = 0;
  // Where payload byte payloadDone goes: offset pieceDone of pieces[piece].
  int piece = 0;
  size_t pieceDone = 0;
  weftResult_t error = weftSuccess;
  unsigned char header[kHeaderBytes] = {};
};

class Connection {
 public:
  // Takes ownership of fd (connected, non-blocking) unless it throws.
  Connection(Context* ctx, int fd, bool isSend, const sockaddr_storage& peer);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool isSend() const { return isSend_; }
  Context* ctx() const { return ctx_; }

  // Queues a message; *request stays valid until test() reports it done or failed.
  weftResult_t post(void* data, size_t size, uint32_t tag, void** request);
  // The same for the concatenation of iov[0..count) (count >= 1, size their sum); iov stays the caller's
  // and must stay valid until then.
  weftResult_t postv(const weftTransportIov_v1* iov, int count, size_t size, uint32_t tag, void** request);
  // Progresses the queue and reports r; frees r when it reports it done or failed.
  weftResult_t test(Request* r, int* done, size_t* size);

 private:
  Request* newRequest(size_t size, uint32_t tag);
  void enqueue(Request* r, void** request);
  void progress();
  void progressSend();
  void progressRecv();
  bool headerArrived(Request* r);
  // Fails the connection when the peer's host has acknowledged nothing for WEFT_SOCKET_DEAD_PEER seconds
  // while this side waits on it with data or probes outstanding (TCP_INFO). Keepalive covers an idle
  // socket only, and TCP_USER_TIMEOUT would also end a connection to a live peer that does not read (a
  // zero window it keeps answering), so this check covers the rest: a host that vanished mid-transfer.
  void checkPeerAnswers();
  void fail(weftResult_t result, const char* format, ...) __attribute__((format(printf, 3, 4)));

  Context* ctx_;
  bool isSend_;
  std::string peer_;
  PolledSocket socket_;  // last of these: when the constructor throws, the caller still owns fd
  plugins::RequestQueue<Request> requests_;  // posted, oldest first (head: the oldest active one)
  weftResult_t error_ = weftSuccess;
  std::chrono::steady_clock::time_point nextLivenessCheck_{};  // while a request waits: once a second
  uint32_t idleTests_ = 0;                                     // idle tests since the clock was last read for it
  // The last recvmsg found nothing: look with poll() before the next one. Polling for a message with
  // recvmsg takes the socket lock the arriving packets need (measured: 10 % of an 8-byte AllReduce in
  // lock contention); poll() looks without it.
  bool drained_ = false;
  // Small messages are read with the header in one recvmsg into this buffer, then copied out: one system
  // call per message instead of two. Bytes of later messages that came along wait here for their
  // receives; a message is never written past its own receive's buffer.
  std::vector<unsigned char> bounce_;
  size_t bounceBegin_ = 0;
  size_t bounceEnd_ = 0;
  // Moves buffered bytes into r (header, then payload). False when r failed.
  bool consumeBuffered(Request* r);
  // Hands buffered bytes to the posted receives, oldest first. False when one failed.
  bool drainBounce();
};

}  // namespace weft::tcp

#endif  // WEFT_PLUGINS_TCP_CONN_H
