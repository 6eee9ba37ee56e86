// Per-collective footer figures, as nccl-tests prints them (average bus bandwidth, wrong values), for Weft and
// each peer, plus the geometric mean of each peer's time ratios over the rows where both it and Weft ran.
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

struct PeerSummary : LibrarySummary {
  std::string library;      // "mpi", "gloo"
  std::string algorithm;    // the peer's call or algorithm for this collective
  double geomeanRatio = 0;  // peer time / Weft time; 0 when no row had both
  int ratios = 0;
};

struct CollSummary {
  const CollDesc* desc = nullptr;
  std::string weftAlgorithm;
  LibrarySummary weft;
  std::vector<PeerSummary> peers;  // in --peer order, as Row::peers; set library and algorithm before add()

  void add(const Row& row);  // after add(), call finish() once
  void finish();
  long long totalWrong() const;  // Weft's and every peer's

 private:
  double weftSum_ = 0;
  std::vector<double> peerSums_;
  std::vector<std::vector<double>> ratioValues_;
};

}  // namespace commperf
