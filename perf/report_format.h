// What the --fusion and --plan tables (report_fusion.cpp, report_plan.cpp) share with each other and with
// the sweep's table (report.cpp): how times, ratios, wrong counts and a form's columns are written.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "bench.h"
#include "fusion_bench.h"
#include "info.h"

namespace commperf {

// nccl-tests: more decimals for short times.
std::string timeString(double us, bool pad = true);
// A form's wrong count: "-" when it did not run, "N/A" when unchecked.
std::string wrongString(const Measure& m);
// "n/a" for a missing ratio.
std::string ratioString(double ratio, const char* format = "%.3g");

// A many-calls table's blocks: a Weft form is time, min-max and launches ("  %8s  %17s  %6s", 37
// characters); a peer is time and min-max (29); each ratio "  %7s".
inline constexpr size_t kFormBlock = 37, kPeerBlock = 29;
// title centred in a block of blockWidth characters (two spaces first).
std::string centeredIn(const std::string& title, size_t blockWidth);
// One form's time and min-max, and its launches when stats is given.
void printFormMeasure(std::FILE* out, const Measure& m, const LaunchStats* stats);
// The case's columns before the ratios, on the heading line and (units) on the units line: N, bytes, type,
// redop, then `forms` Weft forms and a block per peer.
void printCaseColumns(std::FILE* out, int forms, size_t peers, bool units);
// Each peer's ratio column (ratioOf(p)); returns why the peers that did not run were skipped ("" if none).
template <typename RatioOf>
std::string printPeerRatios(std::FILE* out, const std::vector<Measure>& peers, const RunInfo& info,
                            RatioOf ratioOf) {
  std::string skipped;
  for (size_t p = 0; p < peers.size(); ++p) {
    std::fprintf(out, "  %7s", ratioString(ratioOf(p)).c_str());
    const Measure& m = peers[p];
    if (!m.ran && !m.skipped.empty()) {
      if (!skipped.empty()) skipped += "; ";
      skipped += p < info.peers.size() ? info.peers[p].library + ": " + m.skipped : m.skipped;
    }
  }
  return skipped;
}
// The wrong counts of the Weft forms then the peers, "a/b/c/...".
std::string wrongStrings(std::initializer_list<const Measure*> forms, const std::vector<Measure>& peers);

}  // namespace commperf
