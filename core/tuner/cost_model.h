// The tuner's alpha-beta cost model: an algorithm takes steps * alpha + wire * n * beta, where n is one
// rank's contribution in bytes, `steps` and `wire` come from the algorithm's structure at p ranks
// (factors() below), and alpha (per step) and beta (per byte moved, reduction included) are parameters per
// (transport, collective, algorithm).
//
// The parameters come from measurements: `commperf --calibrate` times each algorithm at some rank count
// and fits time = latency + n * ns_per_byte; dividing by the factors at that count gives alpha and beta.
// A (transport, collective, algorithm) may hold measurements at several rank counts; a prediction at p
// ranks uses the one measured nearest p (oversubscribed runs, for instance, differ from the others in more
// than the formula says). The defaults are such measurements, made on the reference box (cost_model.cpp);
// WEFT_TUNING_FILE's replace them at the rank counts it measured. Hierarchical algorithms add up their
// phases, each priced on the transport it runs over (between the ranks of one host, or between hosts).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "core/tuner/algorithm_names.h"

namespace weft {

struct AlphaBeta {
  double alphaUs = 0;        // per step
  double betaNsPerByte = 0;  // per byte of wire factor
};

// An algorithm's time at p ranks is steps * alpha + wire * n * beta.
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

  // A measurement at `nranks` (>= 2): time = latencyUs + n * nsPerByte / 1000 microseconds.
  void addMeasurement(const std::string& transport, Collective c, Algorithm a, int nranks, double latencyUs,
                      double nsPerByte);
  // The parameters for p ranks: from the measurement nearest p (ties: the larger count), else the
  // transport's base values.
  AlphaBeta params(const std::string& transport, Collective c, Algorithm a, int p) const;

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

  std::map<std::tuple<std::string, Collective, Algorithm>, std::map<int, AlphaBeta>> params_;  // by nranks
};

}  // namespace weft
