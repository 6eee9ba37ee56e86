#include "core/tuner/tuner.h"

#include <sstream>

#include "core/common/config.h"
#include "core/common/error.h"

namespace weft {
namespace {

constexpr size_t kNumCollectives = static_cast<size_t>(Collective::Count);
constexpr size_t kNumAlgorithms = static_cast<size_t>(Algorithm::Count);

// Small messages are latency-bound: fewest steps (log p) wins. Large ones are bandwidth-bound: the ring
// moves the minimum bytes per rank and pipelines.
constexpr size_t kSmallMessageBytes = size_t{64} << 10;

std::string supportedList(Collective c) {
  std::string list;
  for (size_t a = 0; a < kNumAlgorithms; ++a) {
    if (supports(c, static_cast<Algorithm>(a)))
      list += (list.empty() ? "" : ", ") + std::string(algorithmName(static_cast<Algorithm>(a)));
  }
  return list;
}

}  // namespace

const char* collectiveName(Collective c) {
  static const char* const names[] = {"allreduce",     "broadcast", "reduce", "allgather",
                                      "reducescatter", "alltoall",  "barrier"};
  return c < Collective::Count ? names[static_cast<size_t>(c)] : "?";
}

const char* algorithmName(Algorithm a) {
  static const char* const names[] = {"ring",  "recursive_doubling", "rabenseifner", "binomial_tree",
                                      "bruck", "pairwise",           "dissemination"};
  return a < Algorithm::Count ? names[static_cast<size_t>(a)] : "?";
}

bool supports(Collective c, Algorithm a) {
  switch (c) {
    case Collective::AllReduce:
      return a == Algorithm::Ring || a == Algorithm::RecursiveDoubling || a == Algorithm::Rabenseifner;
    case Collective::ReduceScatter:
      return a == Algorithm::Ring || a == Algorithm::Rabenseifner;
    case Collective::AllGather:
      return a == Algorithm::Ring || a == Algorithm::Bruck;
    case Collective::Broadcast:
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

Tuner Tuner::parse(const std::string& text) {
  Tuner tuner;
  std::stringstream entries(text);
  for (std::string entry; std::getline(entries, entry, ';');) {
    if (entry.empty()) continue;
    size_t colon = entry.find(':');
    if (colon == std::string::npos || entry.find(':', colon + 1) != std::string::npos) {
      fail(weftInvalidArgument, "WEFT_ALGO entry '{}' is not collective:algorithm", entry);
    }
    std::string collective = entry.substr(0, colon);
    std::string algorithm = entry.substr(colon + 1);
    std::optional<Collective> c;
    for (size_t i = 0; i < kNumCollectives; ++i) {
      if (collective == collectiveName(static_cast<Collective>(i))) c = static_cast<Collective>(i);
    }
    if (!c) {
      fail(weftInvalidArgument,
           "WEFT_ALGO: unknown collective '{}' (allreduce, broadcast, reduce, allgather, reducescatter, alltoall, "
           "barrier)",
           collective);
    }
    std::optional<Algorithm> a;
    for (size_t i = 0; i < kNumAlgorithms; ++i) {
      if (algorithm == algorithmName(static_cast<Algorithm>(i))) a = static_cast<Algorithm>(i);
    }
    if (!a || !supports(*c, *a)) {
      fail(weftInvalidArgument, "WEFT_ALGO: '{}' is not an algorithm of {} (choose from: {})", algorithm,
           collective, supportedList(*c));
    }
    tuner.forced_[static_cast<size_t>(*c)] = *a;
  }
  return tuner;
}

Tuner Tuner::fromConfig() { return parse(config::getOr("WEFT_ALGO", "")); }

Algorithm Tuner::choose(Collective c, size_t bytes, int nranks) const {
  if (const auto& forced = forced_[static_cast<size_t>(c)]) return *forced;
  switch (c) {
    case Collective::AllReduce:
      if (bytes <= kSmallMessageBytes) return Algorithm::RecursiveDoubling;
      return Algorithm::Ring;
    case Collective::ReduceScatter:
      return Algorithm::Ring;
    case Collective::AllGather:
      return bytes * nranks <= kSmallMessageBytes ? Algorithm::Bruck : Algorithm::Ring;
    case Collective::Broadcast:
    case Collective::Reduce:
      return Algorithm::BinomialTree;
    case Collective::AllToAll:
      return Algorithm::Pairwise;
    case Collective::Barrier:
    case Collective::Count:
      break;
  }
  return Algorithm::Dissemination;
}

}  // namespace weft
