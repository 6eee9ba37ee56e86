#include "summary.h"

#include <algorithm>

#include "stats.h"

namespace commperf {

namespace {

void addMeasure(LibrarySummary& s, double& sum, const Measure& m) {
  if (!m.ran) return;
  sum += m.busBw;
  s.peakBusBw = std::max(s.peakBusBw, m.busBw);
  s.wrong += std::max(0LL, m.wrong);
  ++s.measured;
}

}  // namespace

void CollSummary::add(const Row& row) {
  addMeasure(weft, weftSum_, row.outOfPlace);
  addMeasure(weft, weftSum_, row.inPlace);
  addMeasure(peer, peerSum_, row.peer);
  if (row.ratio() > 0) ratioValues_.push_back(row.ratio());
}

void CollSummary::finish() {
  weft.avgBusBw = weft.measured ? weftSum_ / weft.measured : 0;
  peer.avgBusBw = peer.measured ? peerSum_ / peer.measured : 0;
  geomeanRatio = geometricMean(ratioValues_);
  ratios = static_cast<int>(ratioValues_.size());
}

}  // namespace commperf
