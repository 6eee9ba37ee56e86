// Communicators that run a collective with one algorithm forced, or with the tuner choosing: --calibrate
// and --choices time them side by side (Bench::runOnComms) on the same ranks.
#pragma once

#include <string>
#include <vector>

#include "weft/weft.h"

namespace commperf {

// Every flat algorithm of a collective, as WEFT_ALGO names them (hierarchical ones are priced from these).
struct FlatAlgorithms {
  const char* collective;  // commperf's and WEFT_ALGO's name
  std::vector<std::string> algorithms;
};
const std::vector<FlatAlgorithms>& flatAlgorithms();

// A communicator split off `world` (the same ranks, in order) with WEFT_ALGO="collective:algorithm", or
// with WEFT_ALGO unset when `algorithm` is empty (the tuner chooses): Weft reads WEFT_ALGO when a
// communicator is made, so it is set for the split and put back after. Aborts the job on failure.
weftComm_t splitWithAlgorithm(weftComm_t world, int rank, const std::string& collective,
                              const std::string& algorithm);

// One communicator per algorithm of `collective`, forced, in flatAlgorithms() order; with `tunerFirst`,
// the tuner's communicator comes first.
std::vector<weftComm_t> splitPerAlgorithm(weftComm_t world, int rank, const FlatAlgorithms& collective,
                                          bool tunerFirst);

// Destroys every communicator of `comms`.
void destroyComms(const std::vector<weftComm_t>& comms, int rank);

}  // namespace commperf
