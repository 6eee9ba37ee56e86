// Shared by the peer implementations and their factory (peer.cpp); not for the rest of commperf.
#pragma once

#include <memory>
#include <string>

#include "peer.h"

namespace commperf {

std::unique_ptr<Peer> makeMpiPeer();

#ifdef COMMPERF_HAVE_GLOO
// Collective over MPI_COMM_WORLD (the rendezvous directory is agreed over MPI). Throws on failure.
std::unique_ptr<Peer> makeGlooPeer(int rank, int nranks, const std::string& allreduceAlgorithm);
#endif

inline std::string firstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == ',')) line.pop_back();
  return line;
}

}  // namespace commperf
