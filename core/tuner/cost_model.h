// The tuner's alpha-beta cost model: an algorithm takes steps * alpha + wire * n * beta, where n is one
// rank's contribution in bytes, `steps` and `wire` come from the algorithm's structure at p ranks
// (factors() below), and alpha (per step) and beta (per byte moved, reduction included) are parameters per
// (transport, collective, algorithm).
//
// The parameters come from measurements: `commperf --calibrate` times each algorithm at some rank count and
// a few sizes; between two measured sizes the time is the straight line through them, time = latency +
// n * slope, and dividing latency and slope by the factors at that count gives that size band's alpha and
// beta (one pair per band: per-byte costs change as messages leave the caches, per-step costs as
// protocols change, and a single line through 8 B and 4 MiB misjudges the middle). Beyond the largest
// size the last band goes on. A (transport, collective, algorithm) may hold measurements at several rank
// counts; a prediction at p ranks uses the one measured nearest p (oversubscribed runs, for instance,
// differ from the others in more than the formula says). The defaults are such measurements, made on the reference
// box (cost_model.cpp); WEFT_TUNING_FILE's replace them at the rank counts it measured. Hierarchical algorithms
// add up their phases, each priced on the transport it runs over (between the ranks of one host, or between
// hosts).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/tuner/algorithm_names.h"

namespace weft {

struct AlphaBeta {
  double alphaUs = 0;        // per step
  double betaNsPerByte = 0;  // per byte of wire factor
  // Per unit of wire factor, added to the bytes' time: negative where a band's line, extended back to
  // 0 B, falls below zero (per-byte costs grow across the band as messages leave a cache). Clamping that
  // latency to 0 instead overpriced the band's first sizes by up to 40 % and lost the algorithm the
  // measurement favoured (4 ranks over tcp at 2 MiB: Rabenseifner measured 2393 us against the ring's 3078,
  // priced 3208 against 3096). Zero otherwise.
  double offsetUs = 0;
};

// An algorithm's time at p ranks is steps * alpha + wire * (n * beta + offset), never below zero.

struct CostFactors {
  double steps = 0;
  double wire = 0;
};

// What the model needs to know of a communicator.
struct TuneShape {
  int nranks = 1;
  int numHosts = 1;
  int ranksPerHost = 1;        // the largest number of ranks on one host
  std::string intraTransport;  // between ranks of one host ("shm", "tcp"; empty: none)
  std::string interTransport;  // between hosts (empty on one host)
};

class CostModel {
 public:
  // The defaults (see cost_model.cpp for where they come from).
  CostModel();

  // A measurement at `nranks` (>= 2): `timesUs[i]` microseconds for `bytes[i]` per rank, bytes ascending
  // (at least two sizes).
  void addMeasurement(const std::string& transport, Collective c, Algorithm a, int nranks,
                      std::span<const double> bytes, std::span<const double> timesUs);
  // The parameters for p ranks and n bytes: the band of n in the measurement nearest p (ties: the larger
  // count); an unmeasured transport is priced as tcp.
  AlphaBeta params(const std::string& transport, Collective c, Algorithm a, int p, size_t bytes) const;

  // Factors of a flat (non-hierarchical) algorithm at p ranks.
  static CostFactors factors(Collective c, Algorithm a, int p);

  // The cheapest flat algorithm of c at p ranks over one transport (hierarchical algorithms run one
  // between hosts).
  Algorithm cheapestFlat(const std::string& transport, Collective c, size_t bytes, int p) const;

  // Predicted microseconds, or nothing when the algorithm does not apply to the shape (hierarchical on
  // one host, or with one rank per host).
  std::optional<double> predictUs(Collective c, Algorithm a, size_t bytes, const TuneShape& shape) const;

 private:
  double flatUs(const std::string& transport, Collective c, Algorithm a, size_t bytes, int p) const;
  double hierarchicalUs(Collective c, size_t bytes, const TuneShape& shape) const;

  // Size bands of one measurement: band i holds sizes from starts[i] on (the first also below).
  struct Bands {
    std::vector<double> starts;
    std::vector<AlphaBeta> params;
  };
  std::map<std::tuple<std::string, Collective, Algorithm>, std::map<int, Bands>> params_;  // by nranks
};

}  // namespace weft
