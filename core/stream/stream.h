// weftStream_t: an in-order queue of batches run by one background thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "weft/weft.h"

struct weftStream {
  static constexpr uint32_t kLiveMagic = 0x5354524d;  // "STRM"
  uint32_t magic = kLiveMagic;

  weftStream();
  ~weftStream();  // drains the queue, then joins the thread

  void enqueue(std::function<void()> work);
  // Waits until the queue is empty; throws the first failure since the last synchronize.
  void synchronize();
  bool idle();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  bool running_ = false;  // an item is executing
  bool stopping_ = false;
  weftResult_t error_ = weftSuccess;
  std::string errorMessage_;
  std::thread worker_;
};

namespace weft {
void requireStreamOrNull(const weftStream* stream);
}
