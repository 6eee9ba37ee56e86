#include "core/comm/comm_channel.h"

#include <sched.h>

#include <cstring>
#include <thread>

#include "core/common/config.h"
#include "core/common/error.h"

namespace weft {

CommChannel::CommChannel(weftComm& comm, int channel, std::string operation)
    : comm_(comm),
      channel_(channel),
      operation_(std::move(operation)),
      timeout_(config::getInt("WEFT_TIMEOUT", 600)) {
  if (channel_ == kCollectiveChannel) {
    collectiveTag_ = comm_.collectiveCount++;
    operation_ += " #" + std::to_string(collectiveTag_);
  }
}

uint32_t CommChannel::nextTag(int peer, bool isRecv) {
  if (channel_ == kCollectiveChannel) return collectiveTag_;
  return isRecv ? comm_.receivedFrom[peer]++ : comm_.sentTo[peer]++;
}

Request CommChannel::isend(int peer, const void* data, size_t bytes) {
  if (peer < 0 || peer >= comm_.nranks)
    fail(weftInternalError, "{}: send to rank {} of {}", operation_, peer, comm_.nranks);
  transfers_.push_back(Transfer{peer, false, const_cast<void*>(data), bytes, nextTag(peer, false)});
  Transfer& t = transfers_.back();
  start(t);
  return {&t, peer, bytes, false};
}

Request CommChannel::irecv(int peer, void* data, size_t bytes) {
  if (peer < 0 || peer >= comm_.nranks)
    fail(weftInternalError, "{}: receive from rank {} of {}", operation_, peer, comm_.nranks);
  transfers_.push_back(Transfer{peer, true, data, bytes, nextTag(peer, true)});
  Transfer& t = transfers_.back();
  start(t);
  return {&t, peer, bytes, true};
}

bool CommChannel::start(Transfer& t) {
  if (t.peer == comm_.rank) {
    auto& queue = comm_.selfMessages[channel_];
    if (!t.isRecv) {  // sends to self are eager copies
      const auto* bytes = static_cast<const unsigned char*>(t.data);
      queue.emplace_back(bytes, bytes + t.bytes);
      t.done = true;
      return true;
    }
    if (queue.empty()) return false;
    if (queue.front().size() != t.bytes) {
      fail(weftInvalidUsage, "{}: rank {} received {} bytes from itself, expected {}", operation_, comm_.rank,
           queue.front().size(), t.bytes);
    }
    if (t.bytes > 0) std::memcpy(t.data, queue.front().data(), t.bytes);
    queue.pop_front();
    t.done = true;
    return true;
  }
  if (t.connection == nullptr) {
    t.connection =
        t.isRecv ? comm_.connections->tryRecv(t.peer, channel_) : comm_.connections->trySend(t.peer, channel_);
    if (t.connection == nullptr) return false;
  }
  const weftTransportOps_v1& ops = comm_.connections->ops(t.peer);
  weftResult_t r = t.isRecv ? ops.irecv(t.connection, t.data, t.bytes, t.tag, nullptr, &t.request)
                            : ops.isend(t.connection, t.data, t.bytes, t.tag, nullptr, &t.request);
  if (r != weftSuccess) {
    fail(r, "{}: {} rank {} over {} failed to start ({})", operation_, t.isRecv ? "receive from" : "send to",
         t.peer, comm_.connections->transportName(t.peer), weftGetErrorString(r));
  }
  return true;
}

bool CommChannel::finish(Transfer& t) {
  int done = 0;
  size_t size = 0;
  weftResult_t r = comm_.connections->ops(t.peer).test(t.request, &done, &size);
  if (r != weftSuccess) {
    t.request = nullptr;
    fail(r, "{}: {} rank {} failed: {} (the peer died, closed the connection or sent something unexpected)",
         operation_, t.isRecv ? "receive from" : "send to", t.peer, weftGetErrorString(r));
  }
  if (!done) return false;
  t.request = nullptr;
  t.done = true;
  if (t.isRecv && size != t.bytes) {
    fail(weftInvalidUsage, "{}: rank {} sent {} bytes where rank {} expected {} (mismatched calls across ranks?)",
         operation_, t.peer, size, comm_.rank, t.bytes);
  }
  return true;
}

void CommChannel::waitAll(std::span<Request> requests) {
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  int idleRounds = 0;
  for (;;) {
    bool progressed = false;
    const Transfer* waitingOn = nullptr;
    for (Request& request : requests) {
      auto* t = static_cast<Transfer*>(request.handle);
      if (t == nullptr || t->done) continue;
      if (comm_.aborted.load(std::memory_order_relaxed))
        fail(weftInvalidUsage, "{}: communicator aborted", operation_);
      if (t->request == nullptr) {
        if (!start(*t)) {
          waitingOn = t;
          continue;
        }
        progressed = true;
        if (t->done) continue;
      }
      if (finish(*t))
        progressed = true;
      else
        waitingOn = t;
    }
    if (waitingOn == nullptr) break;
    if (progressed) {
      idleRounds = 0;
      deadline = std::chrono::steady_clock::now() + timeout_;  // the limit is on silence, not on size
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) timedOut(requests);
    if (waitingOn->peer == comm_.rank) {
      fail(weftInvalidUsage,
           "{}: rank {} receives from itself but sent itself nothing; pair Send and Recv to self "
           "inside weftGroupStart/End",
           operation_, comm_.rank);
    }
    backOff(++idleRounds, *waitingOn);
  }
  for (Request& request : requests) request.handle = nullptr;
}

void CommChannel::backOff(int idleRounds, const Transfer& waitingOn) {
  // Spin briefly (a reply is often microseconds away), then yield, then sleep in the transport until a
  // socket is ready, so a waiting rank does not steal the core of the rank it waits for.
  if (idleRounds < 64) return;
  if (idleRounds < 256) {
    sched_yield();
    return;
  }
  if (waitingOn.connection != nullptr) {
    comm_.connections->waitReady(waitingOn.peer, 1000);
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void CommChannel::timedOut(std::span<Request> requests) {
  std::string peers;
  for (const Request& request : requests) {
    auto* t = static_cast<const Transfer*>(request.handle);
    if (t != nullptr && !t->done) peers += (peers.empty() ? "" : ", ") + std::to_string(t->peer);
  }
  fail(weftTimeout, "{}: rank {} heard nothing from rank(s) {} for {} s (WEFT_TIMEOUT)", operation_, comm_.rank,
       peers, timeout_.count());
}

void* CommChannel::scratch(int slot, size_t bytes) {
  auto& buffer = comm_.scratch[slot & 1];
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

}  // namespace weft
