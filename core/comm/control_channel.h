// A communicator's control channel: small out-of-band messages between its ranks, on a channel of their
// own (kControlChannel) over the same transports as the data.
//
// - Fault notices. When a rank's communicator fails (a peer died, a wait timed out, the user aborted),
//   the rank tells the others at once, so that every rank's call ends within moments with the first
//   failure's cause ("rank 2 ..."), instead of each waiting for a neighbour that has given up, and
//   reporting that neighbour.
// - Stall reports (WEFT_STALL_WARN, core/comm/stall_report.h).
//
// Connections are made only when a rank first sends: a healthy job pays only for an accept and a few
// tests while a rank waits anyway (see CommChannel::waitAll). Everything here is best effort and bounded
// in time: a peer that is gone is skipped, never waited for.
#pragma once

#include <atomic>
#include <chrono>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/comm/control_message.h"

struct weftComm;

namespace weft {

class ControlChannel {
 public:
  using Clock = std::chrono::steady_clock;

  struct StallNews {
    ControlMessage message;
    Clock::time_point receivedAt;
  };

  explicit ControlChannel(weftComm& comm) : comm_(comm) {}
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  // Accepts connections that arrived, reads what came and moves pending sends along. Never throws: a
  // control connection that fails is dropped (its peer's data connections say what happened).
  void poll();
  // Polling costs syscalls (an accept per listener: 20-30 us on a 2-vCPU VM right after an idle pause), and
  // a rank that polls while its peer arrives makes that peer wait as long. So polls stay out of short
  // waits: a wait polls once it has lasted kQuietWait, then every kWaitPollInterval, which is how fault
  // notices end a wait within moments. Several threads may wait at once (a plan's streams): one polls,
  // the others go on.
  void pollWhileWaiting(Clock::time_point now, Clock::time_point waitingSince) {
    if (now - waitingSince >= kQuietWait) pollAfter(kWaitPollInterval, now);
  }

  // For call sites that come once per operation, so that a rank whose waits are all short still reads
  // notices and drains strangers from its listeners: polls every kCallPollInterval, reading the clock
  // only on every kCallsPerClockRead-th call (30 ns on a 2-vCPU VM, a tenth of a small collective's work).
  void pollEveryFewCalls() {
    // Relaxed load and store, not an increment: a count lost between threads only delays a poll.
    const uint32_t calls = callsSincePoll_.load(std::memory_order_relaxed) + 1;
    callsSincePoll_.store(calls < kCallsPerClockRead ? calls : 0, std::memory_order_relaxed);
    if (calls >= kCallsPerClockRead) pollAfter(kCallPollInterval, Clock::now());
  }

  // Whether a fault notice came.
  bool hasFault() const { return hasFault_.load(std::memory_order_acquire); }
  // Throws weftRemoteError with the fault notice's cause, if one came: `operation` ended because of it.
  void throwIfFault(std::string_view operation) const;
  // Polls up to `limit` for a fault notice. A peer that closed a data connection may have said why.
  bool awaitFault(std::chrono::milliseconds limit);

  // Says that this rank's communicator failed, or passes on the notice that failed it (unchanged, so
  // every rank names the first failure). It goes to ranks rank + 1, + 2, + 4, ... (mod n), and each rank
  // passes a notice on once, when it fails, so n ranks learn of a fault in about log2(n) steps with
  // log2(n) messages each. Returns within about 200 ms.
  void announceFault(weftResult_t code, const std::string& text);

  // Tells `peer` that this rank has waited `seconds` in `what` (stall report).
  void sendStall(int peer, uint32_t seconds, const std::string& what);
  // The latest stall news from each rank that sent some.
  std::map<int, StallNews> stallNews() const {
    std::lock_guard lock(mutex_);
    return stallNews_;
  }

 private:
  struct Inbox {
    void* connection = nullptr;
    void* request = nullptr;
    ControlBytes buffer{};
    bool broken = false;
  };
  struct Outgoing {
    int peer;
    ControlBytes buffer;
    void* connection = nullptr;
    void* request = nullptr;
  };

  // poll() when the last poll was `interval` ago or more, unless another thread is polling.
  void pollAfter(Clock::duration interval, Clock::time_point now) {
    if ((now - interval).time_since_epoch().count() < lastPoll_.load(std::memory_order_relaxed)) return;
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    lastPoll_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
    poll();
  }
  void send(int peer, const ControlMessage& message);
  // Reads every inbox as far as it goes without blocking.
  void readInboxes();
  void deliver(int peer, const ControlBytes& bytes, size_t size);
  // Moves each pending send a step; drops those done or failed. True when none is left.
  bool progressSends();

  static constexpr auto kQuietWait = std::chrono::milliseconds(1);
  static constexpr auto kWaitPollInterval = std::chrono::milliseconds(10);
  static constexpr auto kCallPollInterval = std::chrono::milliseconds(100);
  static constexpr uint32_t kCallsPerClockRead = 16;

  weftComm& comm_;
  // Every member below is used under mutex_: the threads of a plan's streams wait, and poll, at once.
  mutable std::recursive_mutex mutex_;
  std::atomic<Clock::rep> lastPoll_{std::numeric_limits<Clock::rep>::min()};
  std::atomic<uint32_t> callsSincePoll_{0};
  std::atomic<bool> hasFault_{false};  // fault_ is set: lets throwIfFault skip the lock
  std::map<int, Inbox> inboxes_;
  std::list<Outgoing> outgoing_;  // a list: the transports hold pointers into the buffers
  std::optional<ControlMessage> fault_;
  bool announced_ = false;
  std::map<int, StallNews> stallNews_;
};

}  // namespace weft
