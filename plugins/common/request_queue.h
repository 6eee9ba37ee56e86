// A transport connection's requests, shared by the shm and tcp plugins: the queue of those posted, in the
// order their messages go on the wire, and a pool of released ones to reuse, so that steady traffic
// allocates nothing (a deque: the addresses handed to the caller stay valid as it grows).
//
// Request is the plugin's own struct, with at least `next` (the queue or free-list link), `state`, `error`,
// `conn`, `size`, `tag` and `length`; a request is Active from push() until its message is complete (Done) or its
// connection fails (Failed), and Free again once report() has handed its result to the caller.
//
// Header-only and free of core/: plugins include nothing of Weft but include/weft/plugin.h.
#ifndef WEFT_PLUGINS_COMMON_REQUEST_QUEUE_H
#define WEFT_PLUGINS_COMMON_REQUEST_QUEUE_H

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "weft/plugin.h"

namespace weft::plugins {

enum class RequestState : uint8_t { Free, Active, Done, Failed };

template <typename Request>
class RequestQueue {
 public:
  // A request for a message of `size` bytes with `tag` on `conn`, reset to its defaults otherwise and made
  // Active, at the back of the queue. A send's length is its size; a receive's comes with its message.
  template <typename Connection>
  Request* push(Connection* conn, size_t size, uint32_t tag, bool isSend) {
    Request* r = free_;
    if (r != nullptr) {
      free_ = r->next;
    } else {
      r = &pool_.emplace_back();
    }
    *r = Request{};
    r->state = RequestState::Active;
    r->conn = conn;
    r->size = size;
    r->tag = tag;
    if (isSend) r->length = size;
    if (tail_ != nullptr) {
      tail_->next = r;
    } else {
      head_ = r;
    }
    tail_ = r;
    ++outstanding_;
    return r;
  }

  // The oldest request still in the queue, or null.
  Request* head() const { return head_; }

  // The message of r, the oldest request, is complete: r leaves the queue, Done (its caller still holds it).
  void complete(Request* r) {
    assert(r == head_);
    head_ = r->next;
    if (head_ == nullptr) tail_ = nullptr;
    r->next = nullptr;
    r->state = RequestState::Done;
  }

  // The connection failed: every request in the queue leaves it, Failed with `result`.
  void failAll(weftResult_t result) {
    for (Request* r = head_; r != nullptr;) {
      Request* next = r->next;
      r->next = nullptr;
      r->state = RequestState::Failed;
      r->error = result;
      r = next;
    }
    head_ = tail_ = nullptr;
  }

  // What a transport's test() tells the caller of r: not done while it is Active; otherwise done, with its
  // result and the length of its message (0 when it failed), and r goes back to the pool.
  weftResult_t report(Request* r, int* done, size_t* size) {
    if (r->state == RequestState::Active) {
      *done = 0;
      return weftSuccess;
    }
    *done = 1;
    const weftResult_t result = r->state == RequestState::Done ? weftSuccess : r->error;
    if (size != nullptr) *size = result == weftSuccess ? r->length : 0;
    release(r);
    return result;
  }

  // Posted and not yet released.
  size_t outstanding() const { return outstanding_; }

 private:
  // Back to the pool: its caller has taken the result.
  void release(Request* r) {
    r->state = RequestState::Free;
    r->next = free_;
    free_ = r;
    --outstanding_;
  }

  Request* head_ = nullptr;
  Request* tail_ = nullptr;
  Request* free_ = nullptr;
  std::deque<Request> pool_;
  size_t outstanding_ = 0;
};

}  // namespace weft::plugins

#endif  // WEFT_PLUGINS_COMMON_REQUEST_QUEUE_H
