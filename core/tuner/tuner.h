// Picks an algorithm per collective call: WEFT_ALGO's rules first (algo_rules.h), then the cheapest
// algorithm by the cost model (cost_model.h) for the communicator's shape: its rank count, how its ranks
// sit on hosts, and the transports between them. WEFT_LOG_LEVEL=info prints each choice once per
// collective and size class (powers of two).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/tuner/algo_rules.h"
#include "core/tuner/algorithm_names.h"
#include "core/tuner/cost_model.h"

namespace weft {

class Tuner {
 public:
  Tuner();
  // Throws weftInvalidArgument naming the entry that is wrong. The cost model is the default one.
  static Tuner parse(const std::string& algo);
  // WEFT_ALGO, and the cost model of WEFT_TUNING_FILE (loaded once per process) or the defaults.
  static Tuner fromConfig();

  // The communicator's shape, once its peers are known; restarts the choice log.
  void setShape(TuneShape shape);
  const TuneShape& shape() const { return shape_; }
  const CostModel& model() const { return *model_; }

  Algorithm choose(Collective c, size_t bytes) const;
  // Whether WEFT_ALGO names the algorithm of c at this size (then no backend runs it either).
  bool forces(Collective c, size_t bytes) const {
    return !rules_.empty() && forcedAlgorithm(rules_, c, bytes).has_value();  // asked at every collective
  }

 private:
  struct ChoiceLog;

  std::vector<AlgoRule> rules_;
  std::shared_ptr<const CostModel> model_;
  TuneShape shape_;
  std::shared_ptr<ChoiceLog> log_;
};

}  // namespace weft
