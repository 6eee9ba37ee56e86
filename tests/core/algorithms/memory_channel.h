// An in-memory Channel for tests: every rank is a thread of this process and every (source, destination)
// pair a FIFO mailbox.
//
// Two ways of delivering a send, chosen per world:
//   - Eager: isend copies the bytes into the mailbox and completes at once.
//   - Synchronous: the strictest a real Channel may be. A send moves only while its sender waits for it
//     (the communicator's Channel starts and progresses transfers only inside waitAll) and completes
//     only once the receiver has posted the matching receive (a transport may buffer nothing). An
//     algorithm that leaves a send unwatched while it blocks, or sends further ahead than its peer
//     receives, deadlocks here and fails on the timeout.
// Either way, messages from a peer fill the receives posted for that peer in posting order, a receive's
// buffer may be written from the moment it is posted, and waiting for a send checks that its bytes were
// left alone meanwhile. A receive whose size differs from its send, a wait that outlasts the timeout, and
// any wait after another rank has failed throw weft::Error, so a bug fails fast instead of hanging.
// Scratch memory is poisoned and moves whenever it grows.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/algorithms/channel.h"
#include "core/common/error.h"

namespace weft::testing {

enum class Delivery { Eager, Synchronous };

class MemoryChannel;

class MemoryWorld {
 public:
  explicit MemoryWorld(int size, Delivery delivery = Delivery::Eager,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20))
      : size_(size),
        delivery_(delivery),
        timeout_(timeout),
        wakeUp_(size),
        links_(static_cast<size_t>(size) * size) {}

  int size() const { return size_; }
  Delivery delivery() const { return delivery_; }
  // What the channels answer to Channel::cutsLargeMessages (a real communicator: yes over tcp, no over shm),
  // and the opposite to Channel::copiesLargeMessagesOnce.
  void setCutsLargeMessages(bool cuts) { cutsLargeMessages_ = cuts; }
  bool cutsLargeMessages() const { return cutsLargeMessages_; }

  // Runs body(channel) on one thread per rank. Rethrows the first failure (a rank's own error rather than
  // the errors of the ranks that gave up because of it), and fails when the collective left messages
  // undelivered or requests unwaited for.
  inline void run(const std::function<void(MemoryChannel&)>& body);

  // Payload bytes and messages each rank sent during the last run.
  const std::vector<size_t>& bytesSent() const { return bytesSent_; }
  const std::vector<size_t>& messagesSent() const { return messagesSent_; }
  // Payload bytes from one rank to another during the last run.
  size_t bytesBetween(int source, int destination) const { return bytesTo_[source][destination]; }

 private:
  friend class MemoryChannel;

  // A transfer; sends and receives alike. Owned by the channel that made it.
  struct Transfer {
    bool isRecv = false;
    int peer = -1;
    size_t bytes = 0;
    std::vector<BufferPiece> pieces;  // where a send's bytes come from, a receive's go (one for isend/irecv)
    std::vector<char> snapshot;       // a send's bytes as they were at isend
    bool offered = false;             // a send: in its link's queue (or matched)
    bool matched = false;
  };
  // Sends offered and receives posted between one source and one destination, oldest first. At most one
  // of the two queues is non-empty: match() pairs them off.
  struct Link {
    std::deque<std::shared_ptr<Transfer>> sends;  // shared: an eager send may be consumed before it is received
    std::deque<std::shared_ptr<Transfer>> recvs;
  };

  Link& link(int source, int destination) { return links_[static_cast<size_t>(source) * size_ + destination]; }

  // Pairs offered sends with posted receives, copying the bytes. Called with mutex_ held.
  void match(int source, int destination) {
    Link& l = link(source, destination);
    bool any = false;
    while (!l.sends.empty() && !l.recvs.empty()) {
      std::shared_ptr<Transfer> send = l.sends.front();
      std::shared_ptr<Transfer> recv = l.recvs.front();
      l.sends.pop_front();
      l.recvs.pop_front();
      if (send->bytes != recv->bytes) {
        aborted_ = true;
        for (auto& cv : wakeUp_) cv.notify_all();
        fail(weftInternalError, "a receive of {} bytes on rank {} matched a send of {} bytes from rank {}",
             recv->bytes, destination, send->bytes, source);
      }
      size_t at = 0;
      for (const BufferPiece& piece : recv->pieces) {
        if (piece.bytes != 0) std::memcpy(piece.data, send->snapshot.data() + at, piece.bytes);
        at += piece.bytes;
      }
      send->matched = recv->matched = true;
      any = true;
    }
    if (any) {
      wakeUp_[source].notify_all();
      wakeUp_[destination].notify_all();
    }
  }

  void abort() {
    {
      std::lock_guard lock(mutex_);
      aborted_ = true;
    }
    for (auto& cv : wakeUp_) cv.notify_all();
  }

  int size_;
  Delivery delivery_;
  bool cutsLargeMessages_ = true;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::vector<std::condition_variable> wakeUp_;  // one per rank
  std::vector<Link> links_;
  bool aborted_ = false;
  std::vector<size_t> bytesSent_;
  std::vector<size_t> messagesSent_;
  std::vector<std::vector<size_t>> bytesTo_;
};

class MemoryChannel final : public Channel {
 public:
  MemoryChannel(MemoryWorld& world, int rank) : world_(world), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }

  Request isend(int peer, const void* data, size_t bytes) override {
    const BufferPiece piece{const_cast<void*>(data), bytes};
    return isendv(peer, {&piece, 1});
  }
  Request irecv(int peer, void* data, size_t bytes) override {
    const BufferPiece piece{data, bytes};
    return irecvv(peer, {&piece, 1});
  }

  Request isendv(int peer, std::span<const BufferPiece> pieces) override {
    checkPeer(peer);
    auto transfer = std::make_shared<MemoryWorld::Transfer>();
    transfer->peer = peer;
    transfer->pieces.assign(pieces.begin(), pieces.end());
    for (const BufferPiece& piece : pieces) {
      const auto* data = static_cast<const char*>(piece.data);
      transfer->snapshot.insert(transfer->snapshot.end(), data, data + piece.bytes);
    }
    const size_t bytes = transfer->snapshot.size();
    transfer->bytes = bytes;
    bytesSent_ += bytes;
    bytesTo_.resize(world_.size());
    bytesTo_[peer] += bytes;
    ++messagesSent_;
    Request request = track(std::move(transfer));
    if (world_.delivery() == Delivery::Eager) offer(live_[request.handle]);
    return request;
  }

  Request irecvv(int peer, std::span<const BufferPiece> pieces) override {
    checkPeer(peer);
    auto transfer = std::make_shared<MemoryWorld::Transfer>();
    transfer->isRecv = true;
    transfer->peer = peer;
    transfer->pieces.assign(pieces.begin(), pieces.end());
    for (const BufferPiece& piece : pieces) transfer->bytes += piece.bytes;
    Request request = track(std::move(transfer));
    std::lock_guard lock(world_.mutex_);
    world_.link(peer, rank_).recvs.push_back(live_[request.handle]);
    world_.match(peer, rank_);
    return request;
  }

  void waitAll(std::span<Request> requests) override {
    std::vector<std::shared_ptr<MemoryWorld::Transfer>> transfers;
    for (Request& request : requests) {
      auto it = live_.find(request.handle);
      if (it == live_.end()) fail(weftInvalidUsage, "rank {}: waiting for an unknown or consumed request", rank_);
      transfers.push_back(it->second);
    }
    // Offer every send first, as a Channel that progresses all the requests it is given would.
    for (const auto& t : transfers) {
      if (!t->isRecv) offer(t);
    }
    for (const auto& t : transfers) waitFor(*t);
    for (const auto& t : transfers) {
      if (!t->isRecv && sendBuffersChanged(*t)) {
        fail(weftInternalError, "rank {}: the buffer of a send to rank {} changed before the send completed",
             rank_, t->peer);
      }
    }
    for (Request& request : requests) {
      live_.erase(request.handle);
      request.handle = nullptr;
    }
  }

  void* scratch(int slot, size_t bytes) override {
    if (slot < 0 || slot > 1) fail(weftInternalError, "rank {}: no scratch slot {}", rank_, slot);
    std::vector<char>& buffer = scratch_[slot];
    if (bytes > buffer.size() || buffer.empty()) {
      std::vector<char>(std::max<size_t>(bytes, 1), static_cast<char>(0xCD)).swap(buffer);  // a new address
    }
    return buffer.data();
  }

  bool cutsLargeMessages(int peer) const override {
    checkPeer(peer);
    return world_.cutsLargeMessages();
  }

  // Like a real communicator: the transport that does not cut (shm) copies large messages once.
  bool copiesLargeMessagesOnce() const override { return !world_.cutsLargeMessages(); }

  // Requests not consumed by waitAll yet.
  size_t outstandingRequests() const { return live_.size(); }
  size_t bytesSent() const { return bytesSent_; }
  size_t messagesSent() const { return messagesSent_; }
  const std::vector<size_t>& bytesTo() const { return bytesTo_; }

 private:
  void checkPeer(int peer) const {
    if (peer < 0 || peer >= world_.size()) fail(weftInvalidArgument, "rank {}: no peer {}", rank_, peer);
  }

  static bool sendBuffersChanged(const MemoryWorld::Transfer& send) {
    size_t at = 0;
    for (const BufferPiece& piece : send.pieces) {
      if (piece.bytes != 0 && std::memcmp(piece.data, send.snapshot.data() + at, piece.bytes) != 0) return true;
      at += piece.bytes;
    }
    return false;
  }

  Request track(std::shared_ptr<MemoryWorld::Transfer> transfer) {
    Request request{transfer.get()};
    live_.emplace(transfer.get(), std::move(transfer));
    return request;
  }

  void offer(const std::shared_ptr<MemoryWorld::Transfer>& send) {
    std::lock_guard lock(world_.mutex_);
    if (send->offered) return;
    send->offered = true;
    world_.link(rank_, send->peer).sends.push_back(send);
    world_.match(rank_, send->peer);
  }

  void waitFor(const MemoryWorld::Transfer& t) {
    std::unique_lock lock(world_.mutex_);
    const auto deadline = std::chrono::steady_clock::now() + world_.timeout_;
    while (!t.matched && !(world_.delivery() == Delivery::Eager && !t.isRecv)) {
      if (world_.aborted_) {
        fail(weftRemoteError, "rank {}: gave up on a {} rank {}: another rank failed", rank_,
             t.isRecv ? "receive from" : "send to", t.peer);
      }
      if (world_.wakeUp_[rank_].wait_until(lock, deadline) == std::cv_status::timeout && !t.matched) {
        fail(weftTimeout, "rank {}: timed out on a {} rank {} of {} bytes", rank_,
             t.isRecv ? "receive from" : "send to", t.peer, t.bytes);
      }
    }
  }

  MemoryWorld& world_;
  int rank_;
  std::unordered_map<void*, std::shared_ptr<MemoryWorld::Transfer>> live_;
  std::vector<char> scratch_[2];
  size_t bytesSent_ = 0;
  size_t messagesSent_ = 0;
  std::vector<size_t> bytesTo_;
};

void MemoryWorld::run(const std::function<void(MemoryChannel&)>& body) {
  for (auto& l : links_) {
    l.sends.clear();
    l.recvs.clear();
  }
  aborted_ = false;
  std::vector<std::unique_ptr<MemoryChannel>> channels;
  for (int rank = 0; rank < size_; ++rank) channels.push_back(std::make_unique<MemoryChannel>(*this, rank));

  std::vector<std::exception_ptr> errors(size_);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size_; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        body(*channels[rank]);
      } catch (...) {
        errors[rank] = std::current_exception();
        abort();
      }
    });
  }
  for (auto& thread : threads) thread.join();

  bytesSent_.clear();
  messagesSent_.clear();
  bytesTo_.clear();
  for (auto& channel : channels) {
    bytesSent_.push_back(channel->bytesSent());
    bytesTo_.push_back(channel->bytesTo());
    bytesTo_.back().resize(size_);
    messagesSent_.push_back(channel->messagesSent());
  }
  // Prefer the error of a rank that failed by itself.
  std::exception_ptr remote;
  for (auto& error : errors) {
    if (!error) continue;
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      if (e.code() != weftRemoteError) throw;
      if (!remote) remote = error;
    }
  }
  if (remote) std::rethrow_exception(remote);

  for (int source = 0; source < size_; ++source) {
    for (int destination = 0; destination < size_; ++destination) {
      const Link& l = link(source, destination);
      if (!l.sends.empty()) {
        fail(weftInternalError, "{} message(s) from rank {} to rank {} were never received", l.sends.size(),
             source, destination);
      }
      if (!l.recvs.empty()) {
        fail(weftInternalError, "{} receive(s) on rank {} from rank {} were never matched", l.recvs.size(),
             destination, source);
      }
    }
  }
  for (auto& channel : channels) {
    if (channel->outstandingRequests() != 0) {
      fail(weftInternalError, "rank {} left {} request(s) unwaited for", channel->rank(),
           channel->outstandingRequests());
    }
  }
}

}  // namespace weft::testing
