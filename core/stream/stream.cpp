#include "core/stream/stream.h"

#include <algorithm>

#include "core/common/error.h"
#include "topology/cpu_binding.h"

weftStream::weftStream() : worker_([this] { run(); }) {}

weftStream::~weftStream() {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queued_ == 0 && !running_; });
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
  magic = 0;
}

void weftStream::enqueue(weft::StreamTask work) {
  {
    std::lock_guard lock(mutex_);
    push(std::move(work));
  }
  changed_.notify_all();
}

void weftStream::push(weft::StreamTask work) {
  if (queued_ == ring_.size()) {  // full: twice the room, the queued tasks moved to its start in order
    std::vector<weft::StreamTask> larger(std::max<size_t>(8, 2 * ring_.size()));
    for (size_t i = 0; i < queued_; ++i) larger[i] = std::move(ring_[(head_ + i) % ring_.size()]);
    ring_ = std::move(larger);
    head_ = 0;
  }
  ring_[(head_ + queued_) % ring_.size()] = std::move(work);
  ++queued_;
}

weft::StreamTask weftStream::pop() {
  weft::StreamTask work = std::move(ring_[head_]);
  head_ = (head_ + 1) % ring_.size();
  --queued_;
  return work;
}

void weftStream::run() {
  // The worker runs this stream's collectives for the rank: keep it on the rank's NUMA node(s).
  weft::topology::bindThisThreadNearProcess("stream worker");
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || queued_ > 0; });
    if (queued_ == 0) return;
    weft::StreamTask work = pop();
    running_ = true;
    lock.unlock();
    weftResult_t code = weftSuccess;
    std::string message;
    try {
      work();
    } catch (const weft::Error& e) {
      code = e.code();
      message = e.what();
    } catch (const std::exception& e) {
      code = weftInternalError;
      message = e.what();
    }
    lock.lock();
    running_ = false;
    if (code != weftSuccess && error_ == weftSuccess) {
      error_ = code;
      errorMessage_ = message;
    }
    changed_.notify_all();
  }
}

void weftStream::synchronize() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queued_ == 0 && !running_; });
  if (error_ != weftSuccess) {
    weftResult_t code = error_;
    std::string message = errorMessage_;
    error_ = weftSuccess;
    errorMessage_.clear();
    throw weft::Error(code, "an operation on the stream failed: " + message);
  }
}

bool weftStream::idle() {
  std::lock_guard lock(mutex_);
  return queued_ == 0 && !running_;
}

namespace weft {
void requireStreamOrNull(const weftStream* stream) {
  if (stream != nullptr && stream->magic != weftStream::kLiveMagic) {
    fail(weftInvalidArgument, "stream is not a live weftStream_t");
  }
}
}  // namespace weft
