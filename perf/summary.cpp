#include "summary.h"

#include <algorithm>
#include <numeric>

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
  if (peers.size() < row.peers.size()) peers.resize(row.peers.size());
  peerSums_.resize(peers.size());
  ratioValues_.resize(peers.size());
  for (size_t p = 0; p < row.peers.size(); ++p) {
    addMeasure(peers[p], peerSums_[p], row.peers[p]);
    if (p < row.peersInPlace.size()) addMeasure(peers[p], peerSums_[p], row.peersInPlace[p]);
    if (row.ratio(p) > 0) ratioValues_[p].push_back(row.ratio(p));
  }
}

void CollSummary::finish() {
  weft.avgBusBw = weft.measured ? weftSum_ / weft.measured : 0;
  for (size_t p = 0; p < peers.size(); ++p) {
    PeerSummary& s = peers[p];
    bool any = p < peerSums_.size();
    s.avgBusBw = any && s.measured ? peerSums_[p] / s.measured : 0;
    s.geomeanRatio = any ? geometricMean(ratioValues_[p]) : 0;
    s.ratios = any ? static_cast<int>(ratioValues_[p].size()) : 0;
  }
}

long long CollSummary::totalWrong() const {
  return std::accumulate(peers.begin(), peers.end(), weft.wrong,
                         [](long long sum, const PeerSummary& s) { return sum + s.wrong; });
}

}  // namespace commperf
