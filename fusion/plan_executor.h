// Runs a plan's lanes at once (fusion/plan_program.h): lane 0 on the launching thread, every other lane on a
// thread of the plan's own, made when the plan is compiled and parked between launches.
//
// A launch holds the communicator's turn for its whole run, so the lanes' threads are the only ones using it;
// each binds its lane (core/comm/lane.h) and runs its steps in order, waiting first for what each step waits
// for (other lanes' steps, the backend's turn). The waits spin briefly, then sleep on a futex, so that lanes
// waiting on each other give the cores to the ranks they wait for. Nothing is allocated per launch.
//
// A failure on one lane fails the communicator at once (and tells the other ranks), which ends the other
// lanes' waits for their peers; waits on other lanes are released; the launch throws the first failure once
// every lane has stopped.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "core/comm/lane.h"
#include "fusion/plan_program.h"

struct weftComm;

namespace weft {

class PlanExecutor {
 public:
  // Each lane's thread reserves this much stack: algorithms keep little on it.
  static constexpr size_t kLaneStackBytes = size_t{512} << 10;

  // Starts a thread for every lane but the first. Throws weftSystemError when a thread cannot be made.
  PlanExecutor(weftComm& comm, const PlanProgram& program);
  ~PlanExecutor();  // stops and joins the threads (no launch may be running)
  PlanExecutor(const PlanExecutor&) = delete;
  PlanExecutor& operator=(const PlanExecutor&) = delete;

  // Runs every lane's steps; the caller holds the communicator's turn and runs lane 0. Throws the first
  // failure after every lane has stopped.
  void run();

  // Memory the lanes hold: their state and their threads' stacks.
  size_t bytesHeld() const;
  // The most steps that ever ran at the same moment (on different lanes).
  uint32_t peakConcurrentSteps() const { return peak_.load(std::memory_order_relaxed); }

 private:
  struct LaneThread {
    PlanExecutor* executor;
    uint32_t lane;
    pthread_t thread{};
  };
  static void* threadMain(void* laneThread);
  void stopThreads();

  void serve(uint32_t lane);    // a lane thread: runs its lane at every launch until stopped
  void runLane(uint32_t lane);  // this launch's steps of `lane`
  void runStep(const PlanStep& step);
  void recordFailure(std::exception_ptr failure);

  weftComm& comm_;
  const PlanProgram& program_;
  std::vector<std::unique_ptr<LaneState>> lanes_;  // lanes 1..: lane 0 is the communicator's main lane
  std::vector<std::unique_ptr<LaneThread>> threads_;
  // Per lane, steps finished in this launch; released (raised past any wait) when a lane fails.
  std::unique_ptr<std::atomic<uint32_t>[]> finished_;
  std::atomic<uint32_t> backendTurnsDone_{0};
  std::atomic<uint32_t> generation_{0};  // one more per launch: the lane threads wait on it
  std::atomic<uint32_t> lanesBusy_{0};   // lane threads still running this launch
  std::atomic<bool> stopping_{false};
  std::atomic<bool> failed_{false};
  std::atomic<uint32_t> running_{0};
  std::atomic<uint32_t> peak_{0};
  std::mutex failureMutex_;
  std::exception_ptr failure_;  // the first, under failureMutex_
};

}  // namespace weft
