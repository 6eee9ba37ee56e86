// WEFT_STALL_WARN: a rank that has waited that many seconds in one operation without any message moving
// says so, and again after twice, four times, ... as long, in the manner of Horovod's stall inspector.
// Each such rank logs whom it waits for and tells rank 0 (control channel). Rank 0, when it waits too,
// adds a moment later (so that the others' news can arrive) a summary: which ranks wait in the same
// operation, which wait in another, and which it has not heard from: those have not reached the operation
// or are stuck before it, the likely culprits.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

struct weftComm;

namespace weft {

class StallReport {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StallReport(weftComm& comm);

  // True when a report is due for a wait that has been silent since `since`. Cheap: call it per pass.
  bool due(Clock::time_point now, Clock::time_point since);
  // Reports; `operation` names what waits ("allreduce #12"), `waitingOn` the ranks this one waits for
  // ("rank(s) 3"). Named only here, so that a wait that never reports formats nothing.
  void report(Clock::time_point now, std::string_view operation, const std::string& waitingOn);

 private:
  void summarize(Clock::time_point now, std::string_view operation) const;

  weftComm& comm_;
  Clock::duration warnAfter_;  // zero: off
  Clock::time_point since_{};
  Clock::duration nextWarning_{};
  Clock::duration summaryAt_{};  // rank 0: when its summary is due (zero: none pending)
};

}  // namespace weft
