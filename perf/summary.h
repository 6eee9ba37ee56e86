// Per-collective footer figures, as nccl-tests prints them (average bus bandwidth, wrong values), for Weft and
// the peer, plus the geometric mean of the time ratios over the rows where both ran.
#pragma once

#include <string>
#include <vector>

#include "bench.h"

namespace commperf {

struct LibrarySummary {
  double avgBusBw = 0;   // mean over the measured forms and sizes (nccl-tests' "Avg bus bandwidth")
  double peakBusBw = 0;  // the best of them
  long long wrong = 0;   // wrong elements over all checked rows
  int measured = 0;      // forms and sizes that ran
};

struct CollSummary {
  const CollDesc* desc = nullptr;
  std::string weftAlgorithm;
  std::string peerAlgorithm;  // empty without a peer
  LibrarySummary weft;
  LibrarySummary peer;
  double geomeanRatio = 0;  // peer time / Weft time; 0 when no row had both
  int ratios = 0;

  void add(const Row& row);  // after add(), call finish() once
  void finish();

 private:
  double weftSum_ = 0, peerSum_ = 0;
  std::vector<double> ratioValues_;
};

}  // namespace commperf
