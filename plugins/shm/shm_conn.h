// An established connection (send or receive side) and its in-order queue of requests.
#ifndef WEFT_PLUGINS_SHM_CONN_H
#define WEFT_PLUGINS_SHM_CONN_H

#include <pthread.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/request_queue.h"
#include "shm_context.h"
#include "shm_doorbell.h"
#include "shm_ring.h"
#include "shm_segment.h"
#include "weft/plugin.h"

namespace weft::shm {

class Connection;

// Messages up to this many bytes are copied through the ring; larger ones go by CMA where the connection
// agreed on it (else through the ring too, in pieces).
inline constexpr size_t kInlineMaxBytes = size_t{64} << 10;

using plugins::RequestState;

struct Request {
  Connection* conn = nullptr;
  Request* next = nullptr;  // in the connection's queue or free list
  RequestState state = RequestState::Free;
  unsigned char* data = nullptr;  // the user's buffer (only read for a send)
  size_t size = 0;                // bytes posted
  size_t length = 0;              // bytes of the message: posted (send) or from the header (receive)
  uint32_t tag = 0;
  bool started = false;  // send: header in the ring; receive: header read and checked
  bool cma = false;      // the payload goes by process_vm_readv
  size_t payloadDone = 0;
  uint64_t cmaSeq = 0;        // send, CMA: its number among the connection's CMA messages
  uint64_t remote = 0;        // receive, CMA: the payload's address in the sender (or of its list of pieces)
  uint32_t remotePieces = 0;  // receive, CMA: 0, or the length of the sender's list of pieces at `remote`
  weftResult_t error = weftSuccess;
  // Vectored (isendv/irecvv): the caller's pieces instead of data, and where payloadDone lies in them.
  const weftTransportIov_v1* pieces = nullptr;
  int count = 0;
  int piece = 0;           // the piece holding byte payloadDone
  size_t pieceOffset = 0;  // payloadDone's offset in it
};

// What connection setup hands to the connection.
struct Endpoint {
  int socket = -1;  // connected Unix socket; the connection owns it
  Mapping segment;  // the ring
  uint64_t ringBytes = 0;
  Mapping peerDoorbell;  // receive side: from the hello; send side: empty until the reply brings it
  pid_t peerPid = -1;
  int pidfd = -1;    // receive side with CMA; the connection owns it
  bool cma = false;  // receive side: whether large messages come by CMA (the send side learns it later)
};

class Connection {
 public:
  // Takes ownership of the socket and pidfd in ep unless it throws.
  Connection(Context* ctx, bool isSend, Endpoint&& ep);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool isSend() const { return isSend_; }
  Context* ctx() const { return ctx_; }
  pid_t peerPid() const { return peerPid_; }

  // Queues a message; *request stays valid until test() reports it done or failed.
  weftResult_t post(void* data, size_t size, uint32_t tag, void** request);
  // The same for the concatenation of count pieces (size bytes in all), kept by the caller until reported.
  weftResult_t postv(const weftTransportIov_v1* iov, int count, size_t size, uint32_t tag, void** request);
  // Progresses the queue and reports r; frees r when it reports it done or failed.
  weftResult_t test(Request* r, int* done, size_t* size);

  // For waitReady, from any thread: whether the peer changed what this connection waits for since its owner
  // last looked, where the caller is that owner (the thread that last progressed it). Lock-free reads of the
  // segment and of the owner's notes.
  bool mayProgress() const;

 private:
  enum WaitFor : uint8_t { kWaitData = 1, kWaitSpace = 2, kWaitCma = 4 };

  bool progress();
  bool progressSend();
  bool progressRecv();
  bool writeRecords();
  bool completeSends();
  bool readHeader(Request* r);
  bool readCma(Request* r);
  // A CMA message from a sender's list of pieces, or into our own pieces: one process_vm_readv per IOV_MAX.
  int readCmaList(Request* r);
  // Copies the next n payload bytes of r between its buffer (or pieces) and the ring at pos.
  void copyPayload(Request* r, uint64_t pos, size_t n);
  void enqueue(Request* r, void** request);
  bool readReply();
  void checkPeer();
  void refreshHead();
  void refreshTail();
  void publishHead();
  void publishTail();
  void noteWaiting(uint8_t mask);
  void fail(weftResult_t result, const char* format, ...) __attribute__((format(printf, 3, 4)));

  Context* ctx_;
  bool isSend_;
  pid_t peerPid_;
  PolledSocket socket_;
  int pidfd_;
  Mapping segment_;
  Ring ring_;
  Mapping peerDoorbellMap_;
  DoorbellPage* peerDoorbell_ = nullptr;  // null on the send side until the reply
  bool replied_;                          // send side: the acceptor's reply arrived
  bool cma_;
  bool peerGone_ = false;
  std::chrono::steady_clock::time_point lastPeerCheck_{};
  uint32_t idleTests_ = 0;  // idle tests since the clock was last read (checkPeer)

  // Ring positions (stream offsets; they only grow). The sender owns head, the receiver tail; each keeps the
  // last value it saw of the other's, and how far it has published its own.
  uint64_t ringHead_ = 0;
  uint64_t ringTail_ = 0;
  uint64_t headSeen_ = 0;
  uint64_t tailSeen_ = 0;
  uint64_t published_ = 0;
  uint64_t cmaCount_ = 0;     // send: CMA messages written; receive: CMA messages read
  uint64_t cmaDoneSeen_ = 0;  // send: last cmaDone seen
  uint64_t publishStep_;      // publish head/tail at least every this many bytes of a long message

  // What the owner waits for and the values it last saw, for mayProgress().
  std::atomic<uint8_t> waitMask_{0};
  std::atomic<pthread_t> owner_{};  // the last progressing thread (pthread_self(): no thread-local lookup)
  std::atomic<uint64_t> seenHead_{0};
  std::atomic<uint64_t> seenTail_{0};
  std::atomic<uint64_t> seenCmaDone_{0};

  plugins::RequestQueue<Request> requests_;  // posted, oldest first (head: the oldest not yet reported)
  Request* cursor_ = nullptr;                // send side: first request not fully written into the ring
  // readCmaList's lists, kept from message to message.
  std::vector<weftTransportIov_v1> remoteList_;
  std::vector<iovec> localIov_;
  std::vector<iovec> remoteIov_;
  weftResult_t error_ = weftSuccess;
};

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_CONN_H
