// What a backend's waits call back into (weftBackendComm_v1::aborted, polled by the plugin while it
// waits): the communicator's abort flag, and (once the wait has lasted 1 ms) every 10 ms or so the
// control channel, so that another rank's fault notice ends the wait too, and the stall report
// (WEFT_STALL_WARN), so that a backend call that waits long says so like Weft's own waits do.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/comm/stall_report.h"

struct weftComm;

namespace weft {

class BackendWatch {
 public:
  using Clock = std::chrono::steady_clock;

  explicit BackendWatch(weftComm& comm) : comm_(comm), stall_(comm) {}
  BackendWatch(const BackendWatch&) = delete;
  BackendWatch& operator=(const BackendWatch&) = delete;

  // Before each backend call (throws a fault notice that came meanwhile): names it for stall reports
  // ("weftAllReduce (shm backend call #7)"; calls are numbered alike on every rank, since every rank makes them in
  // the same order).
  void begin(const char* operation, const char* backend);
  // True when the waiting call must end: the communicator was aborted, or a peer's fault notice came.
  bool shouldStop();
  // Throws the peer's fault notice that ended the call, if one did.
  void throwIfFault();

  // The plugin's callback.
  static int aborted(const void* watch) {
    return static_cast<BackendWatch*>(const_cast<void*>(watch))->shouldStop();
  }

 private:
  // The call's name, made only when a report or an error needs it: a small call takes well under a
  // microsecond, and formatting a name every time would cost a fair part of that.
  const std::string& name();

  weftComm& comm_;
  const char* operation_ = "";
  const char* backend_ = "";
  uint64_t call_ = 0;  // numbered from 1
  std::string name_;
  StallReport stall_;
  Clock::time_point started_{};  // when the current call first called back (unset until then)
};

}  // namespace weft
