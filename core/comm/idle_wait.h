// How a rank waits on a communicator's messages when a pass over them moved nothing. It spins briefly (a reply
// is often microseconds away), then yields, then sleeps in the transport until its socket is ready, so that a
// waiting rank does not steal the core of the rank it waits for. Once the wait has lasted through the spin it
// also watches the clock (WEFT_TIMEOUT, counted from the last pass that moved something), reports stalls
// (WEFT_STALL_WARN), reads the control channel for fault notices, and notices the communicator's failure.
// CommChannel's waits and the short path of Send/Recv groups (core/collectives/point_to_point.h) share it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/comm/comm.h"
#include "core/comm/stall_report.h"
#include "core/common/error.h"

namespace weft {

class IdleWait {
 public:
  // Polls the control channel every few calls and throws a fault notice that already came: a wait that turns
  // out short still reads them. `operation` names what waits in messages; it must outlive the wait.
  IdleWait(weftComm& comm, std::string_view operation);

  // Checked at every pass: weftCommAbort from another thread ends the wait.
  void throwIfAborted() const {
    if (comm_.aborted.load(std::memory_order_relaxed))
      fail(weftInvalidUsage, "{}: communicator aborted", operation_);
  }
  // A pass moved something: the next idle pass starts a fresh spin, and the silence limit starts over.
  void moved() {
    idleRounds_ = 0;
    clockRunning_ = false;
  }
  // A pass moved nothing. `peer` is a rank the wait stalls on, `connected` whether its connection exists (the
  // transport can then wake us when it is ready); `silentPeers()` names every rank the wait still needs
  // ("rank(s) 1, 3"), called only for a timeout or a stall report. Throws on timeout, fault notice or failure.
  template <typename SilentPeers>
  void idle(int peer, bool connected, const SilentPeers& silentPeers) {
    if (idleRounds_ + 1 < comm_.spinRounds) {  // the spin: the common short wait stays here
      ++idleRounds_;
      return;
    }
    waitLonger(peer, connected, &describe<SilentPeers>, &silentPeers);
  }

 private:
  using Describe = std::string (*)(const void* silentPeers);
  template <typename SilentPeers>
  static std::string describe(const void* silentPeers) {
    return (*static_cast<const SilentPeers*>(silentPeers))();
  }
  void waitLonger(int peer, bool connected, Describe describe, const void* silentPeers);

  weftComm& comm_;
  std::string_view operation_;
  StallReport stall_;
  int idleRounds_ = 0;
  bool clockRunning_ = false;
  std::chrono::steady_clock::time_point deadline_{};
};

// How many idle passes over its messages a waiting rank makes before it yields its core
// (weftComm::spinRounds), by whether the host's ranks of the communicator outnumber the CPUs they may run on
// between them (weftComm::hostCpusShared).
int waitSpinRounds(bool hostCpusShared);
constexpr int kWaitSpinAlone = 64, kWaitSpinShared = 8;

}  // namespace weft
