#include "mpi_conn.h"

#include <algorithm>
#include <stdexcept>

#include "mpi_log.h"

namespace weft::mpi {
namespace {

// The largest payload piece: a whole number of bytes that fits MPI's int count with room to spare.
constexpr size_t kPieceBytes = size_t{1} << 30;

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(mpiFailure(call, rc));
}

}  // namespace

Connection::Connection(Context* ctx, bool isSend, int peerWorldRank, int dataTag)
    : ctx_(ctx), isSend_(isSend), peer_(peerWorldRank), tag_(dataTag) {}

Connection::~Connection() {
  // Weft closes a connection once its requests are done; anything still pending is abandoned. A send
  // cannot be cancelled portably, so it is only freed (MPI completes it in the background).
  if (!Context::mpiUsable()) return;
  auto mpi = ctx_->mpiLock();
  auto drop = [&](MPI_Request& request, bool cancel) {
    if (request == MPI_REQUEST_NULL) return;
    if (cancel) MPI_Cancel(&request);
    MPI_Request_free(&request);
  };
  drop(helloRequest_, false);
  for (Request& r : pool_) {
    drop(r.headerRequest, !isSend_);
    for (MPI_Request& p : r.payload) drop(p, !isSend_);
  }
}

void Connection::sendHello(const Hello& hello) {
  hello_ = hello;
  auto mpi = ctx_->mpiLock();
  check(MPI_Isend(&hello_, sizeof(hello_), MPI_BYTE, peer_, ctx_->controlTag(), MPI_COMM_WORLD, &helloRequest_),
        "MPI_Isend (hello)");
}

Request* Connection::acquire() {
  if (free_.empty()) {
    pool_.emplace_back();
    free_.push_back(&pool_.back());
  }
  Request* r = free_.back();
  free_.pop_back();
  *r = Request{};
  r->conn = this;
  r->state = RequestState::Active;
  return r;
}

void Connection::release(Request* r) {
  r->state = RequestState::Free;
  r->payload.clear();
  free_.push_back(r);
}

weftResult_t Connection::post(void* data, size_t size, uint32_t tag, void** request) {
  if (broken_ != weftSuccess) return broken_;
  Request* r = acquire();
  r->data = static_cast<unsigned char*>(data);
  r->size = size;
  r->tag = tag;
  try {
    if (isSend_) {
      r->header = MessageHeader{kHeaderMagic, tag, size};
      {
        auto mpi = ctx_->mpiLock();
        check(MPI_Isend(&r->header, sizeof(r->header), MPI_BYTE, peer_, tag_, MPI_COMM_WORLD, &r->headerRequest),
              "MPI_Isend");
      }
      postPayload(r, true);
    } else {
      awaitingHeader_.push_back(r);
      if (awaitingHeader_.size() == 1) postHeaderReceive(r);
    }
  } catch (...) {
    release(r);
    throw;
  }
  *request = r;
  return weftSuccess;
}

void Connection::postHeaderReceive(Request* r) {
  auto mpi = ctx_->mpiLock();
  check(MPI_Irecv(&r->header, sizeof(r->header), MPI_BYTE, peer_, tag_, MPI_COMM_WORLD, &r->headerRequest),
        "MPI_Irecv");
}

void Connection::postPayload(Request* r, bool send) {
  // The sender's header says the length; both sides cut it into the same pieces.
  size_t length = send ? r->size : static_cast<size_t>(r->header.size);
  auto mpi = ctx_->mpiLock();
  for (size_t offset = 0; offset < length; offset += kPieceBytes) {
    int piece = static_cast<int>(std::min(kPieceBytes, length - offset));
    MPI_Request request = MPI_REQUEST_NULL;
    if (send) {
      check(MPI_Isend(r->data + offset, piece, MPI_BYTE, peer_, tag_, MPI_COMM_WORLD, &request), "MPI_Isend");
    } else {
      check(MPI_Irecv(r->data + offset, piece, MPI_BYTE, peer_, tag_, MPI_COMM_WORLD, &request), "MPI_Irecv");
    }
    r->payload.push_back(request);
  }
  r->payloadPosted = true;
}

void Connection::progressHeaders() {
  while (!awaitingHeader_.empty() && broken_ == weftSuccess) {
    Request* r = awaitingHeader_.front();
    int arrived = 0;
    {
      auto mpi = ctx_->mpiLock();
      check(MPI_Test(&r->headerRequest, &arrived, MPI_STATUS_IGNORE), "MPI_Test");
    }
    if (arrived == 0) return;
    awaitingHeader_.pop_front();
    if (r->header.magic != kHeaderMagic || r->header.tag != r->tag || r->header.size > r->size) {
      logf(ctx_->host(), weftLogError,
           "irecv from MPI_COMM_WORLD rank %d: expected tag %u and at most %zu bytes, got %stag %u and %llu bytes",
           peer_, r->tag, r->size, r->header.magic == kHeaderMagic ? "" : "a corrupt header, ", r->header.tag,
           static_cast<unsigned long long>(r->header.size));
      r->error = weftRemoteError;
      broken_ = weftRemoteError;  // its payload is still on its way: nothing after it can be matched
      return;
    }
    postPayload(r, false);
    if (!awaitingHeader_.empty()) postHeaderReceive(awaitingHeader_.front());
  }
}

weftResult_t Connection::fail(Request* r, weftResult_t code, const char* what) {
  logf(ctx_->host(), weftLogError, "%s", what);
  release(r);
  return code;
}

weftResult_t Connection::test(Request* r, int* done, size_t* size) {
  *done = 0;
  if (!isSend_) progressHeaders();
  if (r->error != weftSuccess) {
    weftResult_t error = r->error;
    release(r);
    return error;
  }
  if (!r->payloadPosted) {  // its header has not arrived yet
    if (broken_ == weftSuccess) return weftSuccess;
    release(r);  // an earlier message was bad: this one can never be matched
    return broken_;
  }
  int complete = 0;
  int rc = MPI_SUCCESS;
  {
    auto mpi = ctx_->mpiLock();
    if (helloRequest_ != MPI_REQUEST_NULL) {
      int helloDone = 0;
      MPI_Test(&helloRequest_, &helloDone, MPI_STATUS_IGNORE);
    }
    // A send's header goes first; a receive's header is already in (its request is null). Testing a null
    // request reports it complete.
    rc = MPI_Test(&r->headerRequest, &complete, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && complete != 0 && !r->payload.empty()) {
      rc = MPI_Testall(static_cast<int>(r->payload.size()), r->payload.data(), &complete, MPI_STATUSES_IGNORE);
    }
  }
  if (rc != MPI_SUCCESS) {
    return fail(r, weftSystemError, mpiFailure(isSend_ ? "MPI_Test (isend)" : "MPI_Test (irecv)", rc).c_str());
  }
  if (complete == 0) return weftSuccess;
  *done = 1;
  if (size != nullptr) *size = isSend_ ? r->size : static_cast<size_t>(r->header.size);
  release(r);
  return weftSuccess;
}

}  // namespace weft::mpi
