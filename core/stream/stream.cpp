#include "core/stream/stream.h"

#include "core/common/error.h"
#include "topology/cpu_binding.h"

weftStream::weftStream() : worker_([this] { run(); }) {}

weftStream::~weftStream() {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() && !running_; });
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
  magic = 0;
}

void weftStream::enqueue(std::function<void()> work) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(work));
  }
  changed_.notify_all();
}

void weftStream::run() {
  // The worker runs this stream's collectives for the rank: keep it on the rank's NUMA node(s).
  weft::topology::bindThisThreadNearProcess("stream worker");
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
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
  changed_.wait(lock, [&] { return queue_.empty() && !running_; });
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
  return queue_.empty() && !running_;
}

namespace weft {
void requireStreamOrNull(const weftStream* stream) {
  if (stream != nullptr && stream->magic != weftStream::kLiveMagic) {
    fail(weftInvalidArgument, "stream is not a live weftStream_t");
  }
}
}  // namespace weft
