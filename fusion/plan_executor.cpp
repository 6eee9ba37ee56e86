#include "fusion/plan_executor.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include "core/comm/comm.h"
#include "core/comm/connections.h"
#include "core/common/capacity_bytes.h"
#include "core/common/config.h"
#include "core/common/error.h"
#include "fusion/footprint.h"
#include "topology/cpu_binding.h"

namespace weft {
namespace {

// Added to the counters waited on when a step fails: past any wait, so that every waiting thread wakes, sees
// the failure and stops.
constexpr uint32_t kReleased = 1u << 30;

// Waits until `counter` reaches `target`: a short spin (the step waited for is often about to finish), then
// a futex sleep, so a waiting thread gives its core away.
void awaitAtLeast(const std::atomic<uint32_t>& counter, uint32_t target) {
  for (int spin = 0; spin < 64; ++spin) {
    if (counter.load(std::memory_order_acquire) >= target) return;
  }
  for (;;) {
    const uint32_t now = counter.load(std::memory_order_acquire);
    if (now >= target) return;
    counter.wait(now, std::memory_order_acquire);
  }
}

void advance(std::atomic<uint32_t>& counter, uint32_t by = 1) {
  counter.fetch_add(by, std::memory_order_acq_rel);
  counter.notify_all();
}

// The bytes of a lane's largest operation (its largest buffer), up to the reservation's limit.
size_t largestBuffer(const std::vector<PlanStep>& steps) {
  size_t largest = 0;
  auto consider = [&](const Op& op) {
    const Footprint f = footprintOf(op);
    largest = std::max({largest, f.read.end - f.read.begin, f.written.end - f.written.begin});
  };
  for (const PlanStep& step : steps) {
    if (!step.op.members) {
      consider(step.op);
    } else if (step.op.independent) {
      for (const Op& m : *step.op.members) consider(m);
    } else {  // a fused operation: its members packed, as fused_run.cpp does
      size_t read = 0, written = 0;
      for (const Op& m : *step.op.members) {
        const Footprint f = footprintOf(m);
        read += f.read.end - f.read.begin;
        written += f.written.end - f.written.begin;
      }
      largest = std::max({largest, read, written});
    }
  }
  return std::min(largest, PlanExecutor::kReservedScratchBytes);
}

}  // namespace

size_t planThreads(const weftComm& comm, size_t lanes) {
  const long setting = config::getInt("WEFT_PLAN_THREADS", -1);
  if (setting < -1 || setting > kMaxLanes) {
    fail(weftInvalidArgument, "WEFT_PLAN_THREADS={} is not -1 (one per core of this rank) or 0 to {}", setting,
         kMaxLanes);
  }
  size_t threads = 0;
  if (setting >= 0) {
    threads = static_cast<size_t>(setting);
  } else {
    // The rank's share of the CPUs its host's ranks may run on between them, and never more than it may
    // run on itself.
    const size_t own = std::max<size_t>(1, topology::usableCores());
    const size_t ranksHere = std::max<size_t>(1, comm.hosts.ranksOn(comm.hosts.hostOf(comm.rank)).size());
    const size_t share = comm.hostCpus > 0 ? comm.hostCpus / ranksHere : own / ranksHere;
    threads = std::max<size_t>(1, std::min(own, share)) - 1;
  }
  return std::min(threads, lanes > 0 ? lanes - 1 : 0);
}

PlanExecutor::PlanExecutor(weftComm& comm, const PlanProgram& program, size_t threads)
    : comm_(comm),
      program_(program),
      steps_(threads + 1),
      finished_(new std::atomic<uint32_t>[program.lanes.size()]),
      go_(new std::atomic<uint32_t>[threads + 1]) {
  for (size_t lane = 0; lane < program.lanes.size(); ++lane) {
    finished_[lane].store(0);
    if (lane == 0) continue;
    lanes_.push_back(std::make_unique<LaneState>(laneChannel(static_cast<int>(lane))));
    lanes_.back()->scratch[0].reserve(largestBuffer(program.lanes[lane]));
  }
  for (size_t t = 0; t <= threads; ++t) go_[t].store(0);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, kThreadStackBytes);
  for (uint32_t index = 1; index <= threads; ++index) {
    auto thread = std::make_unique<Thread>(Thread{this, index});
    const int error = pthread_create(&thread->handle, &attributes, threadMain, thread.get());
    if (error != 0) {
      pthread_attr_destroy(&attributes);
      stopThreads();  // those made so far
      fail(weftSystemError, "cannot start plan thread {}: {}", index, std::strerror(error));
    }
    threads_.push_back(std::move(thread));
  }
  pthread_attr_destroy(&attributes);
}

PlanExecutor::~PlanExecutor() { stopThreads(); }

void PlanExecutor::stopThreads() {
  stopping_.store(true, std::memory_order_release);
  for (const auto& thread : threads_) advance(go_[thread->index]);
  for (const auto& thread : threads_) pthread_join(thread->handle, nullptr);
  threads_.clear();
}

void* PlanExecutor::threadMain(void* thread) {
  auto* self = static_cast<Thread*>(thread);
  topology::bindThisThreadNearProcess("plan thread");
  self->executor->serve(self->index);
  return nullptr;
}

void PlanExecutor::serve(uint32_t thread) {
  uint32_t seen = 0;  // threads start before the first launch
  for (;;) {
    go_[thread].wait(seen, std::memory_order_acquire);
    seen = go_[thread].load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) return;
    runSteps(thread);
    if (threadsBusy_.fetch_sub(1, std::memory_order_acq_rel) == 1) threadsBusy_.notify_all();
  }
}

void PlanExecutor::schedule() {
  for (auto& steps : steps_) steps.clear();  // a first launch that failed may have begun
  const auto threads = static_cast<uint32_t>(steps_.size());
  for (const auto& [lane, index] : program_.order) {
    const bool onBackend = runsOnBackend(program_.lanes[lane][index].op);
    steps_[onBackend ? 0 : lane % threads].emplace_back(lane, index);
  }
  scheduled_ = true;
}

void PlanExecutor::run() {
  if (!scheduled_) schedule();
  for (size_t lane = 0; lane < program_.lanes.size(); ++lane) finished_[lane].store(0, std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  failure_ = nullptr;
  uint32_t busy = 0;
  for (size_t t = 1; t < steps_.size(); ++t) busy += steps_[t].empty() ? 0 : 1;
  threadsBusy_.store(busy, std::memory_order_relaxed);
  for (size_t t = 1; t < steps_.size(); ++t) {
    if (!steps_[t].empty()) advance(go_[t]);  // releases the stores above to the thread
  }
  runSteps(0);
  for (uint32_t left; (left = threadsBusy_.load(std::memory_order_acquire)) != 0;) {
    threadsBusy_.wait(left, std::memory_order_acquire);
  }
  if (failure_) std::rethrow_exception(failure_);
}

void PlanExecutor::runSteps(uint32_t thread) {
  for (const auto& [lane, index] : steps_[thread]) {
    const PlanStep& step = program_.lanes[lane][index];
    awaitAtLeast(finished_[lane], index);  // the lane's earlier steps, when another thread ran some (backend)
    for (uint32_t w = step.waitsBegin; w < step.waitsEnd; ++w) {
      const PlanWait& wait = program_.waits[w];
      awaitAtLeast(finished_[wait.lane], wait.steps);
    }
    if (failed_.load(std::memory_order_acquire)) return;
    try {
      runStep(lane, step);
    } catch (...) {
      recordFailure(std::current_exception());
      return;
    }
    advance(finished_[lane]);
  }
}

void PlanExecutor::runStep(uint32_t lane, const PlanStep& step) {
  const uint32_t now = running_.fetch_add(1, std::memory_order_relaxed) + 1;
  for (uint32_t peak = peak_.load(std::memory_order_relaxed);
       now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed);) {
  }
  struct Leave {
    std::atomic<uint32_t>& running;
    ~Leave() { running.fetch_sub(1, std::memory_order_relaxed); }
  } leave{running_};
  LaneScope scope(comm_, lane == 0 ? comm_.mainLane : *lanes_[lane - 1]);
  if (step.calls.empty()) return runOperation(step.op);
  runIdenticalCalls(step.op, step.calls);
}

void PlanExecutor::recordFailure(const std::exception_ptr& failure) {
  {
    std::lock_guard lock(failureMutex_);
    if (failure_) return;  // an earlier failure released everyone already
    failure_ = failure;
  }
  failed_.store(true, std::memory_order_release);
  // The other threads may wait for peers that wait for this one: failing the communicator ends their waits
  // here, and telling the other ranks ends theirs.
  try {
    std::rethrow_exception(failure);
  } catch (const AgreedError& e) {
    comm_.setError(e.code(), e.what());
  } catch (const Error& e) {
    comm_.failAndTell(e.code(), e.what());
  } catch (const std::exception& e) {
    comm_.failAndTell(weftInternalError, e.what());
  } catch (...) {
    comm_.failAndTell(weftInternalError, "a plan thread failed");
  }
  for (size_t lane = 0; lane < program_.lanes.size(); ++lane) advance(finished_[lane], kReleased);
}

size_t PlanExecutor::bytesHeld() const {
  const size_t lanes = std::accumulate(lanes_.begin(), lanes_.end(), size_t{0},
                                       [](size_t sum, const auto& lane) { return sum + lane->bytesHeld(); });
  return sizeof(*this) + program_.lanes.size() * sizeof(finished_[0]) + steps_.size() * sizeof(go_[0]) + lanes +
         summedCapacityBytes(steps_) + threads_.size() * (sizeof(Thread) + kThreadStackBytes);
}

}  // namespace weft
