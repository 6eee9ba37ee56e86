// A transport connection over MPI point-to-point: one direction between two MPI_COMM_WORLD ranks, on a
// tag of its own. Each message is a header (Weft's tag, the length) and the payload in pieces of at most
// 1 GiB, so that sizes beyond MPI's int counts pass. Messages of one (source, tag) match in order, which
// gives Weft's in-order connections.
#ifndef WEFT_PLUGINS_MPI_CONN_H
#define WEFT_PLUGINS_MPI_CONN_H

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "mpi_context.h"
#include "mpi_wire.h"

namespace weft::mpi {

class Connection;

enum class RequestState : uint8_t { Free, Active };

struct Request {
  Connection* conn = nullptr;
  RequestState state = RequestState::Free;
  unsigned char* data = nullptr;  // the user's buffer (only read for a send)
  size_t size = 0;                // bytes posted
  uint32_t tag = 0;
  MessageHeader header{};
  MPI_Request headerRequest = MPI_REQUEST_NULL;
  bool payloadPosted = false;  // receive: the header arrived and checked, the payload's receives are posted
  std::vector<MPI_Request> payload;
  weftResult_t error = weftSuccess;
};

class Connection {
 public:
  Connection(Context* ctx, bool isSend, int peerWorldRank, int dataTag);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool isSend() const { return isSend_; }
  Context* ctx() const { return ctx_; }
  int peer() const { return peer_; }
  int dataTag() const { return tag_; }

  // A connector's hello to the listener's process; completed (or freed) by the connection.
  void sendHello(const Hello& hello);

  // Queues a message; *request stays valid until test() reports it done or failed.
  weftResult_t post(void* data, size_t size, uint32_t tag, void** request);
  // Progresses the connection and reports r; frees r when it reports it done or failed.
  weftResult_t test(Request* r, int* done, size_t* size);

 private:
  Request* acquire();
  void release(Request* r);
  // Receive side: headers are received strictly in order, one at a time, and each request's payload
  // receives are posted right after its header, so a later header never matches an earlier payload.
  void progressHeaders();
  void postHeaderReceive(Request* r);
  void postPayload(Request* r, bool send);
  weftResult_t fail(Request* r, weftResult_t code, const char* what);

  Context* ctx_;
  bool isSend_;
  int peer_;
  int tag_;
  Hello hello_{};
  MPI_Request helloRequest_ = MPI_REQUEST_NULL;
  std::deque<Request> pool_;             // stable addresses
  std::vector<Request*> free_;           // reusable entries of pool_
  std::deque<Request*> awaitingHeader_;  // receive side, in posted order; the front's header is posted
  weftResult_t broken_ = weftSuccess;    // after a bad message the stream cannot be trusted
};

}  // namespace weft::mpi

#endif  // WEFT_PLUGINS_MPI_CONN_H
