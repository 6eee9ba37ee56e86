#include "forced_comm.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "bench.h"

namespace commperf {

const std::vector<FlatAlgorithms>& flatAlgorithms() {
  static const std::vector<FlatAlgorithms> all = {
      {"allreduce", {"ring", "recursive_doubling", "rabenseifner"}},
      {"reducescatter", {"ring", "rabenseifner"}},
      {"allgather", {"ring", "bruck"}},
      {"broadcast", {"binomial_tree"}},
      {"reduce", {"binomial_tree"}},
      {"alltoall", {"pairwise"}},
  };
  return all;
}

weftComm_t splitWithAlgorithm(weftComm_t world, int rank, const std::string& collective,
                              const std::string& algorithm) {
  const char* saved = std::getenv("WEFT_ALGO");
  const std::string previous = saved != nullptr ? saved : "";
  if (algorithm.empty()) {
    unsetenv("WEFT_ALGO");
  } else {
    std::string rule = collective;  // appended, not added: GCC 12 -O3 warns (-Wrestrict) on a + b + c
    rule += ':';
    rule += algorithm;
    setenv("WEFT_ALGO", rule.c_str(), 1);
  }
  weftComm_t comm = nullptr;
  weftCheck(weftCommSplit(world, 0, rank, &comm), "weftCommSplit (one algorithm forced)", rank);
  if (saved != nullptr) {
    setenv("WEFT_ALGO", previous.c_str(), 1);
  } else {
    unsetenv("WEFT_ALGO");
  }
  return comm;
}

std::vector<weftComm_t> splitPerAlgorithm(weftComm_t world, int rank, const FlatAlgorithms& collective,
                                          bool tunerFirst) {
  std::vector<weftComm_t> comms;
  if (tunerFirst) comms.push_back(splitWithAlgorithm(world, rank, collective.collective, ""));
  std::transform(collective.algorithms.begin(), collective.algorithms.end(), std::back_inserter(comms),
                 [&](const std::string& algorithm) {
                   return splitWithAlgorithm(world, rank, collective.collective, algorithm);
                 });
  return comms;
}

void destroyComms(const std::vector<weftComm_t>& comms, int rank) {
  for (weftComm_t comm : comms) weftCheck(weftCommDestroy(comm), "weftCommDestroy", rank);
}

}  // namespace commperf
