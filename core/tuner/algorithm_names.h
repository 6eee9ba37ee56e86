// The collectives and algorithms the tuner chooses among, with the names WEFT_ALGO and tuning files use.
#pragma once

#include <optional>
#include <string>

namespace weft {

enum class Collective { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll, Barrier, Count };
enum class Algorithm {
  Ring,
  RecursiveDoubling,
  Rabenseifner,
  BinomialTree,
  Bruck,
  Pairwise,
  Dissemination,
  Hierarchical,
  Count
};

const char* collectiveName(Collective c);  // lower case, as in WEFT_ALGO: "allreduce"
const char* algorithmName(Algorithm a);    // "ring", "recursive_doubling", ...
std::optional<Collective> collectiveNamed(const std::string& name);
std::optional<Algorithm> algorithmNamed(const std::string& name);
bool supports(Collective c, Algorithm a);
// "ring, recursive_doubling, ..." for messages.
std::string supportedList(Collective c);

}  // namespace weft
