// An in-memory Channel for tests: every rank is a thread of this process and every (source, destination)
// pair a FIFO mailbox.
//
// isend copies the bytes into the destination's mailbox and completes at once; waiting for it checks
// that the bytes were left alone meanwhile (a real transport may read them any time until then). irecv
// is matched when waited for: the peer's messages, in sending order, fill this rank's receives from that
// peer in posting order, as the Channel contract says. A receive whose size differs from its send, a
// wait that outlasts the timeout, and any wait after another rank has failed throw weft::Error, so a bug
// fails fast instead of hanging. Scratch memory is poisoned and moves whenever it grows.
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

class MemoryChannel;

class MemoryWorld {
 public:
  explicit MemoryWorld(int size, std::chrono::milliseconds timeout = std::chrono::seconds(20))
      : size_(size), timeout_(timeout), arrived_(size), mailboxes_(static_cast<size_t>(size) * size) {}

  int size() const { return size_; }

  // Runs body(channel) on one thread per rank. Rethrows the first failure (a rank's own error rather than
  // the errors of the ranks that gave up because of it), and fails when the collective left messages
  // undelivered or requests unwaited for.
  inline void run(const std::function<void(MemoryChannel&)>& body);

  // Payload bytes and messages each rank sent during the last run.
  const std::vector<size_t>& bytesSent() const { return bytesSent_; }
  const std::vector<size_t>& messagesSent() const { return messagesSent_; }

 private:
  friend class MemoryChannel;
  using Message = std::shared_ptr<const std::vector<char>>;

  std::deque<Message>& mailbox(int source, int destination) {
    return mailboxes_[static_cast<size_t>(source) * size_ + destination];
  }
  void abort() {
    {
      std::lock_guard lock(mutex_);
      aborted_ = true;
    }
    for (auto& cv : arrived_) cv.notify_all();
  }

  int size_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::vector<std::condition_variable> arrived_;  // one per destination rank
  std::vector<std::deque<Message>> mailboxes_;
  bool aborted_ = false;
  std::vector<size_t> bytesSent_;
  std::vector<size_t> messagesSent_;
};

class MemoryChannel final : public Channel {
 public:
  MemoryChannel(MemoryWorld& world, int rank) : world_(world), rank_(rank), posted_(world.size()) {}

  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }

  Request isend(int peer, const void* data, size_t bytes) override {
    checkPeer(peer);
    auto copy = std::make_shared<std::vector<char>>(bytes);
    if (bytes != 0) std::memcpy(copy->data(), data, bytes);
    {
      std::lock_guard lock(world_.mutex_);
      world_.mailbox(rank_, peer).push_back(copy);
    }
    world_.arrived_[peer].notify_all();
    bytesSent_ += bytes;
    ++messagesSent_;
    auto record = std::make_unique<Record>();
    record->sendData = data;
    record->sent = std::move(copy);
    return track(std::move(record), peer, bytes, false);
  }

  Request irecv(int peer, void* data, size_t bytes) override {
    checkPeer(peer);
    auto record = std::make_unique<Record>();
    record->isRecv = true;
    record->recvData = data;
    record->bytes = bytes;
    posted_[peer].push_back(record.get());
    return track(std::move(record), peer, bytes, true);
  }

  void waitAll(std::span<Request> requests) override {
    for (Request& request : requests) {
      auto it = live_.find(request.handle);
      if (it == live_.end()) fail(weftInvalidUsage, "rank {}: waiting for an unknown or consumed request", rank_);
      Record& record = *it->second;
      if (record.isRecv) {
        while (!record.matched) deliverOne(request.peer);
      } else if (!record.sent->empty() &&
                 std::memcmp(record.sendData, record.sent->data(), record.sent->size()) != 0) {
        fail(weftInternalError, "rank {}: the buffer of a send to rank {} changed before the send completed", rank_,
             request.peer);
      }
      live_.erase(it);
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

  // Requests not consumed by waitAll yet.
  size_t outstandingRequests() const { return live_.size(); }
  size_t bytesSent() const { return bytesSent_; }
  size_t messagesSent() const { return messagesSent_; }

 private:
  struct Record {
    bool isRecv = false;
    const void* sendData = nullptr;
    std::shared_ptr<const std::vector<char>> sent;
    void* recvData = nullptr;
    size_t bytes = 0;
    bool matched = false;
  };

  void checkPeer(int peer) const {
    if (peer < 0 || peer >= world_.size()) fail(weftInvalidArgument, "rank {}: no peer {}", rank_, peer);
  }

  Request track(std::unique_ptr<Record> record, int peer, size_t bytes, bool isRecv) {
    Request request{record.get(), peer, bytes, isRecv};
    live_.emplace(record.get(), std::move(record));
    return request;
  }

  // Takes the oldest message from `peer` (waiting for one) and delivers it to the oldest receive posted
  // for that peer, which exists because the caller waits for an unmatched one.
  void deliverOne(int peer) {
    MemoryWorld::Message message;
    {
      std::unique_lock lock(world_.mutex_);
      auto& box = world_.mailbox(peer, rank_);
      const auto deadline = std::chrono::steady_clock::now() + world_.timeout_;
      while (box.empty()) {
        if (world_.aborted_) fail(weftRemoteError, "rank {}: gave up waiting for rank {}: another rank failed", rank_, peer);
        if (world_.arrived_[rank_].wait_until(lock, deadline) == std::cv_status::timeout && box.empty()) {
          fail(weftTimeout, "rank {}: timed out waiting for a message from rank {}", rank_, peer);
        }
      }
      message = box.front();
      box.pop_front();
    }
    Record* record = posted_[peer].front();
    posted_[peer].pop_front();
    if (message->size() != record->bytes) {
      fail(weftInternalError, "rank {}: a receive of {} bytes from rank {} matched a send of {} bytes", rank_,
           record->bytes, peer, message->size());
    }
    if (!message->empty()) std::memcpy(record->recvData, message->data(), message->size());
    record->matched = true;
  }

  MemoryWorld& world_;
  int rank_;
  std::vector<std::deque<Record*>> posted_;  // per peer: unmatched receives, oldest first
  std::unordered_map<void*, std::unique_ptr<Record>> live_;
  std::vector<char> scratch_[2];
  size_t bytesSent_ = 0;
  size_t messagesSent_ = 0;
};

void MemoryWorld::run(const std::function<void(MemoryChannel&)>& body) {
  for (auto& box : mailboxes_) box.clear();
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
  for (auto& channel : channels) {
    bytesSent_.push_back(channel->bytesSent());
    messagesSent_.push_back(channel->messagesSent());
  }
  // Prefer the error of a rank that failed by itself.
  std::exception_ptr first;
  for (auto& error : errors) {
    if (!error) continue;
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      if (e.code() != weftRemoteError) std::rethrow_exception(error);
    } catch (...) {
      throw;
    }
    if (!first) first = error;
  }
  if (first) std::rethrow_exception(first);

  for (int source = 0; source < size_; ++source) {
    for (int destination = 0; destination < size_; ++destination) {
      if (!mailbox(source, destination).empty()) {
        fail(weftInternalError, "{} message(s) from rank {} to rank {} were never received",
             mailbox(source, destination).size(), source, destination);
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
