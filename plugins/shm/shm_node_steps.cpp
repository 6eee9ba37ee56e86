// The node backend's steps and waiting: publishing a step (with the collective's descriptor at its first),
// ringing the peers' doorbells, checking that the peers run the same collective, and waiting for them -
// spinning while every rank has a CPU of its own, then yielding, then sleeping on the doorbell, watching for
// an aborted communicator, a peer that exited and the timeout. shm_node.h describes the steps' lines.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>

#include "shm_cma.h"
#include "shm_doorbell.h"
#include "shm_node.h"

namespace weft::shm {
namespace {

// Spinning is cheap only while every rank has a core: with more ranks than cores the spinner holds the
// core of the rank it waits for (measured at 4 ranks on 2 cores: a 2 us spin made an 8-byte AllReduce
// 1.8x slower than none). So spin only when every rank has a core, then yield, then sleep on the doorbell.
constexpr auto kSpin = std::chrono::microseconds(50);
constexpr int kSpinsBeforeClock = 64;
constexpr auto kYield = std::chrono::microseconds(200);
constexpr int kSleepSliceUs = 10000;  // between looks at the peers' pidfds and the deadline

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void NodeComm::publish(const NodeDescriptor* descriptor) {
  ++step_;
  StepLine& line = mine()->lines[step_ % kStepLines];
  if (descriptor != nullptr) {
    line.descriptor = *descriptor;
    line.descriptor.collective = collective_;
    line.descriptor.stageIn = stageIn_;
    line.descriptor.stageOut = stageOut_;
    firstStep_ = step_;
    firstSteps_[collective_ % kSlots] = step_;
    firstWait_ = true;
  }
  line.step.store(step_, std::memory_order_release);
  doorbellsPending_ = true;
}

// The fence (step before our look at the sleeper counts, shm_doorbell.h) waits for the step's line to reach
// the peers: profiles put 10-15 % of a 2-rank 8-byte AllReduce on it right after publish, but that is the
// line's transfer, which the rank waits for anyway: with the fence left out (unsafe; 2-vCPU Xeon, 2026-12-02,
// long loops at 2 ranks) 8-byte Broadcast, Reduce and AllReduce took the same time (0.14-0.15, 0.13-0.16 and
// 0.33-0.35 us).
void NodeComm::ringPendingDoorbells() {
  if (!doorbellsPending_) return;
  doorbellsPending_ = false;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int r = 0; r < nranks_; ++r) {
    if (r != rank_) ringDoorbellAfterFence(&peers_[r].control->doorbell);
  }
}

void NodeComm::startStaging() const {
  // Relaxed: the step published next (a release) carries it to the peers.
  std::atomic_ref<uint64_t>(mine()->lines[(step_ + 1) % kStepLines].payload.stagedBytes)
      .store(0, std::memory_order_relaxed);
}

// No doorbell rings here: a peer that went to sleep waiting for a piece (after spinning and yielding for
// kYield) is rung when the collective ends, as for any step (ringPendingDoorbells after the fence).
void NodeComm::staged(size_t bytes) const {
  std::atomic_ref<uint64_t>(mine()->lines[firstStep_ % kStepLines].payload.stagedBytes)
      .store(bytes, std::memory_order_release);
}

void NodeComm::waitStaged(int peer, size_t bytes) {
  uint64_t& word = peers_[peer].control->lines[firstStep_ % kStepLines].payload.stagedBytes;
  auto ready = [&] { return std::atomic_ref<uint64_t>(word).load(std::memory_order_acquire) >= bytes; };
  wait(ready, [&](int r) { return r == peer && !ready(); });
}

bool NodeComm::stepReached(int peer, uint64_t step) const {
  return peers_[peer].control->lines[step % kStepLines].step.load(std::memory_order_acquire) >= step;
}

bool NodeComm::allReached(uint64_t step) const {
  for (int r = 0; r < nranks_; ++r) {
    if (r != rank_ && !stepReached(r, step)) return false;
  }
  return true;
}

const NodeDescriptor& NodeComm::peerDescriptor(int peer) const {
  return peers_[peer].control->lines[firstStep_ % kStepLines].descriptor;
}

void NodeComm::checkDescriptor(int peer) const {
  const NodeDescriptor& theirs = peerDescriptor(peer);
  const NodeDescriptor& ours = mine()->lines[firstStep_ % kStepLines].descriptor;
  if (theirs.coll == ours.coll && theirs.count == ours.count && theirs.datatype == ours.datatype &&
      theirs.op == ours.op && theirs.root == ours.root && theirs.collective == ours.collective) {
    return;
  }
  auto describe = [](const NodeDescriptor& d) {
    return std::string(nodeCollName(static_cast<weftCollType_t>(d.coll))) + " #" + std::to_string(d.collective) +
           " (count " + std::to_string(d.count) + ", type " + std::to_string(d.datatype) + ", op " +
           std::to_string(d.op) + ", root " + std::to_string(d.root) + ")";
  };
  throw NodeError{weftInvalidUsage, "mismatched collectives: rank " + std::to_string(peer) + " called " +
                                        describe(theirs) + " where rank " + std::to_string(rank_) + " called " +
                                        describe(ours)};
}

void NodeComm::waitAll() {
  waitAllReached(step_);
  if (firstWait_) {
    firstWait_ = false;
    for (int r = 0; r < nranks_; ++r) {
      if (r != rank_) checkDescriptor(r);
    }
  }
}

void NodeComm::waitAllReached(uint64_t step) {
  wait([&] { return allReached(step); });
}

void NodeComm::waitFor(int peer) {
  wait([&] { return stepReached(peer, step_); });
  if (firstWait_) {
    firstWait_ = false;
    checkDescriptor(peer);
  }
}

int NodeComm::waitForAny(std::vector<int>& pending) {
  auto found = pending.end();
  auto ready = [&] {
    found = std::find_if(pending.begin(), pending.end(), [&](int r) { return stepReached(r, step_); });
    return found != pending.end();
  };
  wait(ready, [&](int r) { return std::find(pending.begin(), pending.end(), r) != pending.end(); });
  const int peer = *found;
  pending.erase(found);
  if (firstWait_) {
    checkDescriptor(peer);
    firstWait_ = !pending.empty();
  }
  return peer;
}

void NodeComm::checkAborted() const {
  if (aborted_ != nullptr && aborted_(hostComm_) != 0) failPeer(weftInvalidUsage, "the communicator was aborted");
}

template <typename Ready>
void NodeComm::wait(Ready ready) {
  wait(ready, [&](int r) { return !stepReached(r, step_); });
}

template <typename Ready, typename Lagging>
void NodeComm::wait(Ready ready, Lagging lagging) {
  if (ready()) return;
  ringPendingDoorbells();  // before this rank may spin, yield or sleep: a peer may sleep until it is rung
  // Most waits of a small collective end within a few hundred nanoseconds: spin that long before the first
  // clock read, which would cost a tenth of such a collective.
  for (int i = 0; spin_ && i < kSpinsBeforeClock; ++i) {
    if (ready()) return;
    cpuRelax();
  }
  auto start = std::chrono::steady_clock::now();
  auto spinUntil = start + kSpin;
  while (spin_ && std::chrono::steady_clock::now() < spinUntil) {
    for (int i = 0; i < 32; ++i) {
      if (ready()) return;
      cpuRelax();
    }
    checkAborted();
  }
  auto yieldUntil = start + kYield;
  while (std::chrono::steady_clock::now() < yieldUntil) {
    if (ready()) return;
    checkAborted();
    sched_yield();
  }
  auto deadline = start + std::chrono::duration<double>(timeoutSeconds_);
  for (;;) {
    {
      DoorbellSleep sleep(&mine()->doorbell);
      if (ready()) return;
      sleep.sleep(kSleepSliceUs);
    }
    if (ready()) return;
    checkAborted();
    bool waitedForExited = false;
    for (int r = 0; r < nranks_; ++r) {
      if (r != rank_ && lagging(r) && processExited(peers_[r].pidfd)) waitedForExited = true;
    }
    if (waitedForExited) failPeer(weftRemoteError, exitedPeers() + " exited");
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string missing;
      for (int r = 0; r < nranks_; ++r) {
        if (r == rank_ || !lagging(r)) continue;
        if (!missing.empty()) missing += ',';
        missing += std::to_string(r);
      }
      failPeer(weftTimeout, "no news from rank(s) " + missing + " for " +
                                std::to_string(static_cast<long>(timeoutSeconds_)) + " s (WEFT_TIMEOUT)");
    }
  }
}

void NodeComm::failPeer(weftResult_t code, const std::string& message) const {
  std::string what = current_ != nullptr ? nodeCollName(current_->coll) : "setup";
  throw NodeError{
      code, what + " #" + std::to_string(collective_) + " on rank " + std::to_string(rank_) + ": " + message};
}

std::string NodeComm::exitedPeers() const {
  // Every peer that has exited is named: the first to die may have done its part of this step already,
  // and the one found gone may be a survivor that gave up.
  std::string exited;
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_ || !processExited(peers_[r].pidfd)) continue;
    exited += exited.empty() ? "rank " : ", rank ";
    exited += std::to_string(r) + " (pid " + std::to_string(peers_[r].pid) + ")";
  }
  return exited;
}

}  // namespace weft::shm
