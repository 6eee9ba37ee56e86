#include "core/tuner/algorithm_names.h"

namespace weft {
namespace {

constexpr size_t kNumCollectives = static_cast<size_t>(Collective::Count);
constexpr size_t kNumAlgorithms = static_cast<size_t>(Algorithm::Count);

}  // namespace

const char* collectiveName(Collective c) {
  static const char* const names[] = {"allreduce",     "broadcast", "reduce", "allgather",
                                      "reducescatter", "alltoall",  "barrier"};
  return c < Collective::Count ? names[static_cast<size_t>(c)] : "?";
}

const char* algorithmName(Algorithm a) {
  static const char* const names[] = {"ring",  "recursive_doubling", "rabenseifner",  "binomial_tree",
                                      "bruck", "pairwise",           "dissemination", "hierarchical"};
  return a < Algorithm::Count ? names[static_cast<size_t>(a)] : "?";
}

std::optional<Collective> collectiveNamed(const std::string& name) {
  for (size_t i = 0; i < kNumCollectives; ++i) {
    if (name == collectiveName(static_cast<Collective>(i))) return static_cast<Collective>(i);
  }
  return std::nullopt;
}

std::optional<Algorithm> algorithmNamed(const std::string& name) {
  for (size_t i = 0; i < kNumAlgorithms; ++i) {
    if (name == algorithmName(static_cast<Algorithm>(i))) return static_cast<Algorithm>(i);
  }
  return std::nullopt;
}

bool supports(Collective c, Algorithm a) {
  switch (c) {
    case Collective::AllReduce:
      return a == Algorithm::Ring || a == Algorithm::RecursiveDoubling || a == Algorithm::Rabenseifner ||
             a == Algorithm::Hierarchical;
    case Collective::ReduceScatter:
      return a == Algorithm::Ring || a == Algorithm::Rabenseifner;
    case Collective::AllGather:
      return a == Algorithm::Ring || a == Algorithm::Bruck || a == Algorithm::Hierarchical;
    case Collective::Broadcast:
      return a == Algorithm::BinomialTree || a == Algorithm::Hierarchical;
    case Collective::Reduce:
      return a == Algorithm::BinomialTree;
    case Collective::AllToAll:
      return a == Algorithm::Pairwise;
    case Collective::Barrier:
      return a == Algorithm::Dissemination;
    case Collective::Count:
      break;
  }
  return false;
}

std::string supportedList(Collective c) {
  std::string list;
  for (size_t a = 0; a < kNumAlgorithms; ++a) {
    if (supports(c, static_cast<Algorithm>(a)))
      list += (list.empty() ? "" : ", ") + std::string(algorithmName(static_cast<Algorithm>(a)));
  }
  return list;
}

}  // namespace weft
