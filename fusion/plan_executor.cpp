#include "fusion/plan_executor.h"

#include <cstring>
#include <optional>

#include "core/comm/comm.h"
#include "core/comm/connections.h"
#include "core/common/error.h"
#include "fusion/fused_run.h"
#include "topology/cpu_binding.h"

namespace weft {
namespace {

// Added to the counters waited on when a lane fails: past any wait, so that every waiting lane wakes, sees
// the failure and stops.
constexpr uint32_t kReleased = 1u << 30;

// Waits until `counter` reaches `target`: a short spin (the step waited for is often about to finish), then
// a futex sleep, so a waiting lane gives its core away.
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

}  // namespace

PlanExecutor::PlanExecutor(weftComm& comm, const PlanProgram& program)
    : comm_(comm), program_(program), finished_(new std::atomic<uint32_t>[program.lanes.size()]) {
  for (size_t lane = 0; lane < program.lanes.size(); ++lane) finished_[lane].store(0);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, kLaneStackBytes);
  for (uint32_t lane = 1; lane < program.lanes.size(); ++lane) {
    lanes_.push_back(std::make_unique<LaneState>(laneChannel(static_cast<int>(lane))));
    auto thread = std::make_unique<LaneThread>(LaneThread{this, lane});
    const int error = pthread_create(&thread->thread, &attributes, threadMain, thread.get());
    if (error != 0) {
      pthread_attr_destroy(&attributes);
      stopThreads();  // those made so far
      fail(weftSystemError, "cannot start the thread of plan stream {}: {}", lane, std::strerror(error));
    }
    threads_.push_back(std::move(thread));
  }
  pthread_attr_destroy(&attributes);
}

PlanExecutor::~PlanExecutor() { stopThreads(); }

void PlanExecutor::stopThreads() {
  stopping_.store(true, std::memory_order_release);
  advance(generation_);
  for (const auto& thread : threads_) pthread_join(thread->thread, nullptr);
  threads_.clear();
}

void* PlanExecutor::threadMain(void* laneThread) {
  auto* self = static_cast<LaneThread*>(laneThread);
  topology::bindThisThreadNearProcess("plan stream");
  self->executor->serve(self->lane);
  return nullptr;
}

void PlanExecutor::serve(uint32_t lane) {
  uint32_t seen = 0;  // threads start before the first launch
  for (;;) {
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) return;
    runLane(lane);
    if (lanesBusy_.fetch_sub(1, std::memory_order_acq_rel) == 1) lanesBusy_.notify_all();
  }
}

void PlanExecutor::run() {
  for (size_t lane = 0; lane < program_.lanes.size(); ++lane) finished_[lane].store(0, std::memory_order_relaxed);
  backendTurnsDone_.store(0, std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  failure_ = nullptr;
  lanesBusy_.store(static_cast<uint32_t>(threads_.size()), std::memory_order_relaxed);
  advance(generation_);  // releases the stores above to the lane threads
  runLane(0);
  for (uint32_t busy; (busy = lanesBusy_.load(std::memory_order_acquire)) != 0;) {
    lanesBusy_.wait(busy, std::memory_order_acquire);
  }
  if (failure_) std::rethrow_exception(failure_);
}

void PlanExecutor::runLane(uint32_t lane) {
  std::optional<LaneScope> scope;
  if (lane > 0) scope.emplace(comm_, *lanes_[lane - 1]);
  for (const PlanStep& step : program_.lanes[lane]) {
    for (uint32_t w = step.waitsBegin; w < step.waitsEnd; ++w) {
      const PlanWait& wait = program_.waits[w];
      awaitAtLeast(finished_[wait.lane], wait.steps);
    }
    if (step.backendTurn >= 0) awaitAtLeast(backendTurnsDone_, static_cast<uint32_t>(step.backendTurn));
    if (failed_.load(std::memory_order_acquire)) return;
    try {
      runStep(step);
    } catch (...) {
      recordFailure(std::current_exception());
      return;
    }
    if (step.backendTurn >= 0) advance(backendTurnsDone_);
    advance(finished_[lane]);
  }
}

void PlanExecutor::runStep(const PlanStep& step) {
  const uint32_t now = running_.fetch_add(1, std::memory_order_relaxed) + 1;
  for (uint32_t peak = peak_.load(std::memory_order_relaxed);
       now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed);) {
  }
  struct Leave {
    std::atomic<uint32_t>& running;
    ~Leave() { running.fetch_sub(1, std::memory_order_relaxed); }
  } leave{running_};
  runOperation(step.op);
}

void PlanExecutor::recordFailure(std::exception_ptr failure) {
  {
    std::lock_guard lock(failureMutex_);
    if (failure_) return;  // an earlier failure released everyone already
    failure_ = failure;
  }
  failed_.store(true, std::memory_order_release);
  // The other lanes may wait for peers that wait for this lane: failing the communicator ends their waits
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
    comm_.failAndTell(weftInternalError, "a plan stream failed");
  }
  for (size_t lane = 0; lane < program_.lanes.size(); ++lane) advance(finished_[lane], kReleased);
  advance(backendTurnsDone_, kReleased);
}

size_t PlanExecutor::bytesHeld() const {
  size_t bytes = sizeof(*this) + program_.lanes.size() * sizeof(finished_[0]);
  for (const auto& lane : lanes_) bytes += lane->bytesHeld();
  return bytes + threads_.size() * (sizeof(LaneThread) + kLaneStackBytes);
}

}  // namespace weft
