// WEFT_ALGO: algorithms forced per collective and, optionally, per size range, in the style of oneCCL's
// CCL_ALLREDUCE and Open MPI's tuned rules:
//   allreduce:recursive_doubling:0-64K;allreduce:ring:64K-inf;broadcast:binomial_tree
// A range lo-hi holds sizes lo <= bytes < hi (K, M, G are powers of 1024; inf has no end); an entry
// without one holds every size. The size is the bytes of one rank's contribution (count * element size;
// AllGather's send block, ReduceScatter's receive block). For a size, the first entry of the collective
// whose range holds it wins; sizes no entry holds are left to the tuner.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/tuner/algorithm_names.h"

namespace weft {

struct AlgoRule {
  Collective collective;
  Algorithm algorithm;
  size_t lo = 0;
  size_t hi = static_cast<size_t>(-1);  // exclusive; -1: no end
};

// Throws weftInvalidArgument naming the entry that is wrong (unknown names, an algorithm the collective
// does not have, a malformed or empty range).
std::vector<AlgoRule> parseAlgoRules(const std::string& text);

// The forced algorithm for `bytes`, if an entry holds it.
std::optional<Algorithm> forcedAlgorithm(const std::vector<AlgoRule>& rules, Collective c, size_t bytes);

}  // namespace weft
