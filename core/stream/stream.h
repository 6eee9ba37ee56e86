// weftStream_t: an in-order queue of batches run by one background thread. The queue is a ring of inline
// tasks that grows only when it is full, so that work queued in steady state (a plan launched every step)
// allocates nothing.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/stream/stream_task.h"
#include "weft/weft.h"

struct weftStream {
  static constexpr uint32_t kLiveMagic = 0x5354524d;  // "STRM"
  uint32_t magic = kLiveMagic;

  weftStream();
  ~weftStream();  // drains the queue, then joins the thread

  void enqueue(weft::StreamTask work);
  template <typename F>
  void enqueue(F&& work) {
    enqueue(weft::StreamTask(std::forward<F>(work)));
  }
  // Waits until the queue is empty; throws the first failure since the last synchronize.
  void synchronize();
  bool idle();

 private:
  void run();
  void push(weft::StreamTask work);  // with mutex_ held
  weft::StreamTask pop();            // with mutex_ held, queued_ > 0

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<weft::StreamTask> ring_;  // queued_ tasks from head_ on, wrapping around
  size_t head_ = 0;
  size_t queued_ = 0;
  bool running_ = false;  // an item is executing
  bool stopping_ = false;
  weftResult_t error_ = weftSuccess;
  std::string errorMessage_;
  std::thread worker_;
};

namespace weft {
void requireStreamOrNull(const weftStream* stream);
}
