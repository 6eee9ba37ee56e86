#include "core/tuner/cost_model.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace weft {
namespace {

int log2Floor(int p) {
  int k = 0;
  while ((2 << k) <= p) ++k;
  return k;
}
int log2Ceil(int p) { return p <= 1 ? 0 : log2Floor(p - 1) + 1; }

// When nothing was measured for a transport: per step and per byte, as the reference box's tcp ring.
constexpr AlphaBeta kUnmeasured = {6.0, 0.30};

// The defaults: `commperf --calibrate` on a 2-vCPU AMD EPYC Zen 5 box (Debian 12, Open MPI 4.1.4 launching;
// until 2026-11-27 the reference box, 2 cores), at 2, 3 and 4 ranks (3 and 4 oversubscribed) over each
// transport (perf/results/tuning/).
constexpr size_t kMaxPoints = 12;
struct Measurement {
  const char* transport;
  Collective collective;
  Algorithm algorithm;
  int nranks;
  size_t points;
  double bytes[kMaxPoints];
  double timesUs[kMaxPoints];
};
using C = Collective;
using A = Algorithm;
constexpr Measurement kReferenceMeasurements[] = {
#include "core/tuner/reference_measurements.inc"
};

}  // namespace

CostModel::CostModel() {
  for (const Measurement& m : kReferenceMeasurements) {
    addMeasurement(m.transport, m.collective, m.algorithm, m.nranks, {m.bytes, m.points}, {m.timesUs, m.points});
  }
}

void CostModel::addMeasurement(const std::string& transport, Collective c, Algorithm a, int nranks,
                               std::span<const double> bytes, std::span<const double> timesUs) {
  const CostFactors f = factors(c, a, nranks);
  Bands bands;
  double leastStepUs = 0;  // what a step cost the smallest messages measured
  for (size_t i = 0; i + 1 < bytes.size() && i + 1 < timesUs.size(); ++i) {
    const double slope = std::max(0.0, (timesUs[i + 1] - timesUs[i]) / (bytes[i + 1] - bytes[i]));  // us/B
    // The band's line, time = latency + n * slope, at p0 ranks: the latency goes to the steps and the
    // slope to the wire. A step costs no less than it did for the smallest messages, so a band whose line
    // passes near zero (large sizes, where the latency is a small difference of two large times and noise
    // flips its sign) still pays that per step at other rank counts: without it, the Zen 5 box's tcp files
    // (a negative latency there) priced a 1024-rank ring at 1 MiB at 1.6 ms, the reference box's at 38 ms. What
    // the line's latency lacks of those steps, or all of it where it is negative, stays with the wire (offsetUs),
    // so the line is reproduced at p0 and scales with the wire elsewhere.
    const double latency = timesUs[i] - slope * bytes[i];
    if (i == 0) leastStepUs = std::max(0.0, latency) / f.steps;
    const bool byWire = f.wire > 0 && latency < f.steps * leastStepUs;
    bands.starts.push_back(bytes[i]);
    bands.params.push_back({byWire ? leastStepUs : std::max(0.0, latency) / f.steps,
                            f.wire > 0 ? slope * 1e3 / f.wire : 0,
                            byWire ? (latency - f.steps * leastStepUs) / f.wire : 0});
  }
  if (!bands.params.empty()) params_[{transport, c, a}][nranks] = std::move(bands);
}

AlphaBeta CostModel::params(const std::string& transport, Collective c, Algorithm a, int p, size_t bytes) const {
  auto it = params_.find({transport, c, a});
  if (it == params_.end() && transport != "tcp") it = params_.find({"tcp", c, a});  // an unmeasured network
  if (it == params_.end()) return kUnmeasured;
  const std::map<int, Bands>& byRanks = it->second;
  auto nearest = byRanks.lower_bound(p);
  if (nearest == byRanks.end() ||
      (nearest != byRanks.begin() && p - std::prev(nearest)->first < nearest->first - p)) {
    nearest = std::prev(nearest);
  }
  const Bands& bands = nearest->second;
  const auto band = std::upper_bound(bands.starts.begin(), bands.starts.end(), static_cast<double>(bytes));
  const size_t i = band == bands.starts.begin() ? 0 : static_cast<size_t>(band - bands.starts.begin()) - 1;
  return bands.params[i];
}

CostFactors CostModel::factors(Collective c, Algorithm a, int p) {
  const double q = p;
  const int pof2 = 1 << log2Floor(p);
  const double fold = p == pof2 ? 0 : 2;  // the extra steps of a rank count that is not a power of two
  const double lg = log2Floor(p);
  switch (a) {
    case Algorithm::Ring:
      if (c == Collective::AllReduce) return {2 * (q - 1), 2 * (q - 1) / q};
      return {q - 1, q - 1};  // AllGather, ReduceScatter: n is one rank's block
    case Algorithm::RecursiveDoubling:
      return {lg + fold, lg + fold};
    case Algorithm::Rabenseifner:
      if (c == Collective::AllReduce) return {2 * lg + fold, 2.0 * (pof2 - 1) / pof2 + fold};
      return {lg + fold, q - 1 + fold};
    case Algorithm::Bruck:
      return {static_cast<double>(log2Ceil(p)), q - 1};
    case Algorithm::BinomialTree:
      return {static_cast<double>(log2Ceil(p)), static_cast<double>(log2Ceil(p))};
    case Algorithm::Pairwise:
      return {q - 1, q - 1};
    case Algorithm::Dissemination:
      return {static_cast<double>(log2Ceil(p)), 0};
    case Algorithm::Hierarchical:
    case Algorithm::Count:
      break;
  }
  return {q, q};
}

double CostModel::flatUs(const std::string& transport, Collective c, Algorithm a, size_t bytes, int p) const {
  if (p <= 1) return 0;
  const CostFactors f = factors(c, a, p);
  const AlphaBeta ab = params(transport, c, a, p, bytes);
  return std::max(
      0.0, f.steps * ab.alphaUs + f.wire * (static_cast<double>(bytes) * ab.betaNsPerByte * 1e-3 + ab.offsetUs));
}

// The phases of core/algorithms/hierarchical_*.cpp, each priced on its own transport.
double CostModel::hierarchicalUs(Collective c, size_t bytes, const TuneShape& s) const {
  const int hosts = s.numHosts;
  const int local = s.ranksPerHost;
  const std::string& intra = s.intraTransport.empty() ? s.interTransport : s.intraTransport;
  const std::string& inter = s.interTransport;
  switch (c) {
    case Collective::AllReduce: {
      const size_t slice = bytes / static_cast<size_t>(local);
      const Algorithm between = cheapestFlat(inter, Collective::AllReduce, slice, hosts);
      return flatUs(intra, Collective::ReduceScatter, Algorithm::Ring, slice, local) +
             flatUs(inter, Collective::AllReduce, between, slice, hosts) +
             flatUs(intra, Collective::AllGather, Algorithm::Ring, slice, local);
    }
    case Collective::AllGather:
      return flatUs(inter, Collective::AllGather, Algorithm::Ring, bytes, hosts) +
             flatUs(intra, Collective::AllGather, Algorithm::Ring, bytes * static_cast<size_t>(hosts), local);
    case Collective::Broadcast:
      return flatUs(inter, Collective::Broadcast, Algorithm::BinomialTree, bytes, hosts) +
             flatUs(intra, Collective::Broadcast, Algorithm::BinomialTree, bytes, local);
    default:
      return 0;
  }
}

Algorithm CostModel::cheapestFlat(const std::string& transport, Collective c, size_t bytes, int p) const {
  Algorithm best = Algorithm::Count;
  double bestUs = 0;
  for (int i = 0; i < static_cast<int>(Algorithm::Count); ++i) {
    const auto a = static_cast<Algorithm>(i);
    if (a == Algorithm::Hierarchical || !supports(c, a)) continue;
    const double us = flatUs(transport, c, a, bytes, p);
    if (best == Algorithm::Count || us < bestUs) {
      best = a;
      bestUs = us;
    }
  }
  return best;
}

std::optional<double> CostModel::predictUs(Collective c, Algorithm a, size_t bytes, const TuneShape& s) const {
  if (!supports(c, a)) return std::nullopt;
  if (a == Algorithm::Hierarchical) {
    if (s.numHosts <= 1 || s.ranksPerHost <= 1 || s.interTransport.empty()) return std::nullopt;
    return hierarchicalUs(c, bytes, s);
  }
  // A flat algorithm between hosts goes at the pace of its slowest links.
  const std::string& transport = s.numHosts > 1 ? s.interTransport : s.intraTransport;
  return flatUs(transport, c, a, bytes, s.nranks);
}

}  // namespace weft
