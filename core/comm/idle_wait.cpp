#include "core/comm/idle_wait.h"

#include <sched.h>

#include <thread>

#include "core/comm/connections.h"
#include "core/comm/control_channel.h"

namespace weft {
namespace {
// Idle passes after which a waiting rank stops yielding and sleeps in the transport instead.
constexpr int kYieldRounds = 256;
}  // namespace

// Passes over the transfers before a waiting rank starts giving its core away. With a core of its own a rank
// can spin a while; with more ranks than cores the spinner holds the core of the rank it waits for.
// Measured (commperf sendrecv ring, 8 B, shm): 4 ranks on 2 cores took 3.0-3.6 us with 64 passes, 2.2 us with
// 16, 1.46-1.48 us with 4-8, 1.75-1.83 us with 1; 2 ranks on 2 cores were alike with 8 and 64, while 8 B
// AllReduce over TCP at 2 ranks took 4.49 us with 8 passes against 4.40 us with 64.
int waitSpinRounds(bool hostCpusShared) { return hostCpusShared ? kWaitSpinShared : kWaitSpinAlone; }

IdleWait::IdleWait(weftComm& comm, std::string_view operation) : comm_(comm), operation_(operation), stall_(comm) {
  comm_.control->pollEveryFewCalls();
  comm_.control->throwIfFault(operation_);
}

void IdleWait::waitLonger(int peer, bool connected, Describe describe, const void* silentPeers) {
  if (idleRounds_ >= comm_.spinRounds) {
    // The limit is on silence, not on size: the clock starts when nothing has moved for the spin (a clock read
    // per pass would cost more than a small message).
    auto now = std::chrono::steady_clock::now();
    if (!clockRunning_) deadline_ = now + comm_.timeout;
    clockRunning_ = true;
    const auto since = deadline_ - comm_.timeout;
    if (now > deadline_) {
      fail(weftTimeout, "{}: rank {} heard nothing from {} for {} s (WEFT_TIMEOUT)", operation_, comm_.rank,
           describe(silentPeers), comm_.timeout.count());
    }
    if (stall_.due(now, since)) stall_.report(now, operation_, describe(silentPeers));
    comm_.control->pollWhileWaiting(now, since);
    comm_.control->throwIfFault(operation_);
    comm_.throwIfFailed();  // another thread's operation on it failed (a plan's other stream)
  }
  ++idleRounds_;
  if (idleRounds_ < comm_.spinRounds) return;
  if (idleRounds_ < kYieldRounds) {
    sched_yield();
  } else if (connected) {
    comm_.connections->waitReady(peer, 1000);
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace weft
