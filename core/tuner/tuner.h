// Picks an algorithm per collective from the message size and the rank count, unless WEFT_ALGO forces
// one ("allreduce:ring;broadcast:binomial_tree"). A name that is not an algorithm of that collective is
// an error, never a silent fallback.
#pragma once

#include <array>
#include <cstddef>
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
  Count
};

const char* collectiveName(Collective c);  // lower case, as in WEFT_ALGO: "allreduce"
const char* algorithmName(Algorithm a);    // "ring", "recursive_doubling", ...
bool supports(Collective c, Algorithm a);

class Tuner {
 public:
  // Throws weftInvalidArgument naming the entry that is wrong.
  static Tuner parse(const std::string& text);
  static Tuner fromConfig();  // WEFT_ALGO, or the defaults when unset

  Algorithm choose(Collective c, size_t bytes, int nranks) const;
  // Whether WEFT_ALGO names the algorithm of c (then no backend runs c either).
  bool forces(Collective c) const { return forced_[static_cast<size_t>(c)].has_value(); }

 private:
  std::array<std::optional<Algorithm>, static_cast<size_t>(Collective::Count)> forced_{};
};

}  // namespace weft
