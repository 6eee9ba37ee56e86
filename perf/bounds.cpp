#include "bounds.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <thread>
#include <vector>

namespace commperf {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kRepetitions = 5;

int usableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1u, std::thread::hardware_concurrency());
}

// Best (shortest) time over the repetitions of work(thread, threads) run by `threads` threads at once. The
// threads start each repetition together at a barrier and thread 0 times it up to the next barrier.
double bestSeconds(int threads, const std::function<void(int, int)>& work) {
  std::barrier sync(threads);
  std::vector<double> times(kRepetitions);
  auto body = [&](int t) {
    for (double& time : times) {
      sync.arrive_and_wait();
      auto start = Clock::now();
      work(t, threads);
      sync.arrive_and_wait();
      if (t == 0) time = std::chrono::duration<double>(Clock::now() - start).count();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(body, t);
  body(0);
  for (std::thread& thread : pool) thread.join();
  return *std::min_element(times.begin(), times.end());
}

// [begin, end) of thread t's slice of n elements, cut at multiples of 16 (a cache line of floats).
std::pair<size_t, size_t> slice(size_t n, int t, int threads) {
  size_t per = (n / static_cast<size_t>(threads) + 15) & ~size_t{15};
  size_t begin = std::min(n, per * static_cast<size_t>(t));
  return {begin, std::min(n, begin + per)};
}

struct FloatArray {
  explicit FloatArray(size_t n)
      : data(static_cast<float*>(::operator new (n * sizeof(float), std::align_val_t{64}))) {
    std::fill(data, data + n, 1.0f);  // fault every page in before timing
  }
  ~FloatArray() { ::operator delete (data, std::align_val_t{64}); }
  FloatArray(const FloatArray&) = delete;
  FloatArray& operator=(const FloatArray&) = delete;
  float* data;
};

// Spins until *flag == value; yields after a while so that two processes sharing one CPU still progress.
// False when `limit` passes first (the other side died).
bool waitFor(const std::atomic<uint64_t>& flag, uint64_t value, Clock::time_point limit) {
  for (uint64_t spins = 1;; ++spins) {
    if (flag.load(std::memory_order_acquire) == value) return true;
    if (spins % 1024 == 0) sched_yield();
    if (spins % 65536 == 0 && Clock::now() > limit) return false;
  }
}

double pingPongRoundTripUs() {
  constexpr uint64_t kWarmup = 2000, kBatch = 10000;
  constexpr uint64_t kTotal = kWarmup + kBatch * kRepetitions;
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return -1;
  static_assert(std::atomic<uint64_t>::is_always_lock_free, "a shared-memory flag must be lock free");
  auto* flag = new (page) std::atomic<uint64_t>(0);
  auto limit = Clock::now() + std::chrono::seconds(20);
  pid_t child = fork();
  if (child < 0) {
    munmap(page, 4096);
    return -1;
  }
  if (child == 0) {  // the echo: answers 2i+1 with 2i+2; touches nothing of MPI's and leaves with _exit
    for (uint64_t i = 0; i < kTotal; ++i) {
      if (!waitFor(*flag, 2 * i + 1, limit)) _exit(1);
      flag->store(2 * i + 2, std::memory_order_release);
    }
    _exit(0);
  }
  std::vector<double> batches;
  bool ok = true;
  auto start = Clock::now();
  for (uint64_t i = 0; i < kTotal && ok; ++i) {
    if (i >= kWarmup && (i - kWarmup) % kBatch == 0) start = Clock::now();
    flag->store(2 * i + 1, std::memory_order_release);
    ok = waitFor(*flag, 2 * i + 2, limit);
    if (ok && i >= kWarmup && (i - kWarmup) % kBatch == kBatch - 1)
      batches.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kBatch);
  }
  if (!ok) kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  munmap(page, 4096);
  if (!ok || batches.empty()) return -1;
  return *std::min_element(batches.begin(), batches.end());
}

}  // namespace

Bounds measureBounds(size_t bytes) {
  Bounds result;
  result.bytes = bytes;
  result.threads = usableCpus();
  size_t n = bytes / sizeof(float);
  double size = static_cast<double>(n * sizeof(float));
  {
    FloatArray src(n), dst(n);
    auto copy = [&](int t, int threads) {
      auto [begin, end] = slice(n, t, threads);
      std::memcpy(dst.data + begin, src.data + begin, (end - begin) * sizeof(float));
    };
    result.memcpy1 = size / bestSeconds(1, copy) / 1e9;
    result.memcpyAll = size / bestSeconds(result.threads, copy) / 1e9;
  }
  {
    FloatArray a(n), b(n), c(n);
    auto add = [&](int t, int threads) {
      auto [begin, end] = slice(n, t, threads);
      const float* __restrict x = a.data;
      const float* __restrict y = b.data;
      float* __restrict z = c.data;
      for (size_t i = begin; i < end; ++i) z[i] = x[i] + y[i];
    };
    result.add1 = size / bestSeconds(1, add) / 1e9;
    result.addAll = size / bestSeconds(result.threads, add) / 1e9;
  }
  result.pingPongUs = pingPongRoundTripUs();
  return result;
}

}  // namespace commperf
