// Runs a plan's lanes (fusion/plan_program.h) on the launching thread and on threads of the plan's own, made
// when the plan is compiled and parked between launches.
//
// Threads, not lanes, are what cost cores: a thread per lane would leave dozens of threads taking turns on a
// few cores, each switch costing more than a small collective (100 AllReduces of 1 KiB on 34 lanes over TCP
// at 2 ranks on 2 cores ran 3 times slower than on one thread). So a plan has at most WEFT_PLAN_THREADS
// threads besides the launching one (default: the cores this rank may use per rank on its host, less one),
// and lane l runs on thread l mod (threads + 1). Each thread runs the steps of its lanes in program order,
// each on its own lane, after the steps it waits for: as the earliest unfinished step of the whole program
// can always run, on every rank, however many threads each rank has, no launch can deadlock.
//
// The communicator's backend runs one collective at a time, in the same order on every rank: the steps that
// go to it (known from the first launch, when the backend is set up; the same on every rank) all run on the
// launching thread, in program order, each still on its own lane.
//
// Waits spin briefly, then sleep on a futex, so that a waiting thread gives its core to the ranks it waits
// for. A thread without steps is not woken. Nothing is allocated per launch after the first.
//
// A failure on one thread fails the communicator at once (and tells the other ranks), which ends the other
// threads' waits for their peers; waits on other lanes are released; the launch throws the first failure once
// every thread has stopped.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/comm/lane.h"
#include "fusion/plan_program.h"

struct weftComm;

namespace weft {

class PlanExecutor {
 public:
  // Each thread reserves this much stack: algorithms keep little on it.
  static constexpr size_t kThreadStackBytes = size_t{512} << 10;
  // A lane's scratch is reserved at compile time for its largest operation, up to this much (an algorithm
  // that needs more grows it at the first launch).
  static constexpr size_t kReservedScratchBytes = size_t{4} << 20;

  // The lanes of `program` but the first (the communicator's main lane), with their scratch, and `threads`
  // threads (at most one per lane beyond the first). Throws weftSystemError when a thread cannot be made.
  PlanExecutor(weftComm& comm, const PlanProgram& program, size_t threads);
  ~PlanExecutor();  // stops and joins the threads (no launch may be running)
  PlanExecutor(const PlanExecutor&) = delete;
  PlanExecutor& operator=(const PlanExecutor&) = delete;

  // Runs every step; the caller holds the communicator's turn and is thread 0. The first launch decides which
  // steps go to the backend (it may set the backend up). Throws the first failure after every thread stopped.
  void run();

  // Memory the lanes and threads hold: the lanes' state and the threads' stacks.
  size_t bytesHeld() const;
  // The most steps that ever ran at the same moment (on different threads).
  uint32_t peakConcurrentSteps() const { return peak_.load(std::memory_order_relaxed); }

 private:
  struct Thread {
    PlanExecutor* executor;
    uint32_t index;  // 1..: 0 is the launching thread
    pthread_t handle{};
  };
  static void* threadMain(void* thread);

  void stopThreads();
  void schedule();              // at the first launch: which thread runs each step
  void serve(uint32_t thread);  // a plan thread: runs its steps at every launch until stopped
  void runSteps(uint32_t thread);
  void runStep(uint32_t lane, const PlanStep& step);
  void recordFailure(const std::exception_ptr& failure);

  weftComm& comm_;
  const PlanProgram& program_;
  std::vector<std::unique_ptr<LaneState>> lanes_;  // lanes 1..: lane 0 is the communicator's main lane
  std::vector<std::unique_ptr<Thread>> threads_;
  // Per thread (0: the launching one), its steps in program order as (lane, index); set at the first launch.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> steps_;
  bool scheduled_ = false;
  // Per lane, steps finished in this launch; released (raised past any wait) when a step fails.
  std::unique_ptr<std::atomic<uint32_t>[]> finished_;
  std::unique_ptr<std::atomic<uint32_t>[]> go_;  // per thread, one more per launch it has steps in
  std::atomic<uint32_t> threadsBusy_{0};         // plan threads still running this launch
  std::atomic<bool> stopping_{false};
  std::atomic<bool> failed_{false};
  std::atomic<uint32_t> running_{0};
  std::atomic<uint32_t> peak_{0};
  std::mutex failureMutex_;
  std::exception_ptr failure_;  // the first, under failureMutex_
};

// Threads a plan of `lanes` lanes gets besides the launching one: WEFT_PLAN_THREADS when set (>= 0), else
// the cores this process may use divided by the communicator's ranks on this host, less one; at most lanes - 1.
// Throws weftInvalidArgument for a bad WEFT_PLAN_THREADS.
size_t planThreads(const weftComm& comm, size_t lanes);

}  // namespace weft
