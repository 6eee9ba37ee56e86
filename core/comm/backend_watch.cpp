#include "core/comm/backend_watch.h"

#include <fmt/format.h>

#include "core/comm/comm.h"

namespace weft {

void BackendWatch::begin(const char* operation, const char* backend) {
  operation_ = operation;
  backend_ = backend;
  ++call_;
  started_ = {};  // set by the first callback: a call that never waits reads no clock
  comm_.control->pollEveryFewCalls();
  throwIfFault();
}

const std::string& BackendWatch::name() {
  name_ = fmt::format("{} ({} backend call #{})", operation_, backend_, call_);
  return name_;
}

bool BackendWatch::shouldStop() {
  if (comm_.aborted.load(std::memory_order_relaxed)) return true;
  // The plugin may call back every few microseconds while it spins: the control channel is polled only
  // in long waits, since it costs syscalls.
  auto now = Clock::now();
  if (started_ == Clock::time_point{}) started_ = now;  // the plugin has just begun to wait
  comm_.control->pollWhileWaiting(now, started_);
  if (comm_.control->hasFault()) return true;
  if (stall_.due(now, started_)) {
    stall_.report(now, name(), "the backend's other ranks");
  }
  return false;
}

void BackendWatch::throwIfFault() {
  if (comm_.control->hasFault()) comm_.control->throwIfFault(name());
}

}  // namespace weft
