// What a result needs next to it to be read later: versions, ranks, hosts, Weft's plugin and algorithm
// settings, the peers and the machine's bounds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bounds.h"
#include "options.h"
#include "peer.h"

namespace commperf {

struct PeerInfo {
  std::string library;    // "mpi", "gloo"
  std::string version;    // the library's own words
  std::string transport;  // empty when the library decides itself
};

struct RunInfo {
  int nranks = 0;
  int version = 0;              // weftGetVersion
  std::string weftVersion;      // "0.1.0"
  std::string mpiVersion;       // first line of MPI_Get_library_version
  std::string weftPlugins;      // WEFT_PLUGINS, or "default"
  std::string weftAlgo;         // WEFT_ALGO, or "default"
  std::vector<PeerInfo> peers;  // in --peer order; empty: Weft alone
  std::optional<Bounds> bounds;
  std::vector<std::string> rankLines;  // "Rank  0 Pid  1234 on host" (rank 0 only)
};

// Collective over MPI_COMM_WORLD (gathers the rank lines).
RunInfo gatherRunInfo(int rank, int nranks, const Peers& peers);

// What WEFT_ALGO forces for this collective ("allreduce:ring;broadcast:binomial_tree" -> "ring" for
// allreduce), or "default" (the tuner picks by size).
std::string weftAlgorithmFor(const std::string& weftAlgo, const std::string& coll);

// "default" when the variable is unset or empty.
std::string envOrDefault(const char* name);

}  // namespace commperf
