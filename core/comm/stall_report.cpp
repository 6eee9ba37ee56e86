#include "core/comm/stall_report.h"

#include <algorithm>
#include <vector>

#include "core/comm/comm.h"
#include "core/comm/control_channel.h"
#include "core/common/log.h"
#include "core/common/rank_list.h"

namespace weft {
namespace {

long wholeSeconds(StallReport::Clock::duration d) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
}

}  // namespace

StallReport::StallReport(weftComm& comm) : comm_(comm), warnAfter_(comm.stallWarn) {}

bool StallReport::due(Clock::time_point now, Clock::time_point since) {
  if (warnAfter_ == Clock::duration::zero()) return false;
  if (since != since_) {  // something moved: a new silence starts
    since_ = since;
    nextWarning_ = warnAfter_;
    summaryAt_ = Clock::duration::zero();
  }
  Clock::duration waited = now - since_;
  return waited >= nextWarning_ || (summaryAt_ != Clock::duration::zero() && waited >= summaryAt_);
}

void StallReport::report(Clock::time_point now, std::string_view operation, const std::string& waitingOn) {
  Clock::duration waited = now - since_;
  if (summaryAt_ != Clock::duration::zero() && waited >= summaryAt_) {
    summarize(now, operation);
    summaryAt_ = Clock::duration::zero();
  }
  if (waited < nextWarning_) return;
  log::warn("stall: rank {} has waited {} s in {} for {} (WEFT_STALL_WARN={} s; next report after {} s)",
            comm_.rank, wholeSeconds(waited), operation, waitingOn, wholeSeconds(warnAfter_),
            wholeSeconds(nextWarning_ * 2));
  if (comm_.rank == 0) {
    summaryAt_ = nextWarning_ + std::min<Clock::duration>(warnAfter_ / 2, std::chrono::seconds(5));
  } else {
    comm_.control->sendStall(0, static_cast<uint32_t>(wholeSeconds(waited)),
                             fmt::format("{} waiting for {}", operation, waitingOn));
  }
  nextWarning_ *= 2;
}

void StallReport::summarize(Clock::time_point now, std::string_view operation) const {
  std::vector<int> same, unheard;
  std::string elsewhere;
  const auto& news = comm_.control->stallNews();
  for (int r = 1; r < comm_.nranks; ++r) {
    auto it = news.find(r);
    if (it == news.end() || it->second.receivedAt < since_) {  // older news is from another wait
      unheard.push_back(r);
    } else if (it->second.message.text.starts_with(fmt::format("{} ", operation))) {
      same.push_back(r);
    } else {
      elsewhere += fmt::format("; rank {} waits in {} ({} s, reported {} s ago)", r, it->second.message.text,
                               it->second.message.seconds, wholeSeconds(now - it->second.receivedAt));
    }
  }
  same.insert(same.begin(), 0);
  log::warn(
      "stall report: {} {} in {}{}{}", rankList(same), same.size() == 1 ? "waits" : "wait", operation, elsewhere,
      unheard.empty()
          ? std::string()
          : fmt::format("; not heard from {}: not in {} yet, or stuck before it", rankList(unheard), operation));
}

}  // namespace weft
