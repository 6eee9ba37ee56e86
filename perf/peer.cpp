// Makes the peers named by --peer. Gloo is optional at build time: without it, --peer gloo is an error that
// says so rather than a missing option.
#include <mpi.h>

#include "peer.h"
#include "peer_internal.h"

namespace commperf {

namespace {

// Null with `error` set when this rank could not make the peer.
std::unique_ptr<Peer> makePeer(PeerKind kind, const Options& options, int rank, int nranks, std::string& error) {
  if (kind == PeerKind::kMpi) return makeMpiPeer();
#ifdef COMMPERF_HAVE_GLOO
  try {
    return makeGlooPeer(rank, nranks, options.glooAllreduce);
  } catch (const std::exception& e) {
    error = std::string("Gloo setup failed on rank ") + std::to_string(rank) + ": " + e.what();
  }
#else
  (void)options;
  (void)rank;
  (void)nranks;
  error = "commperf was built without Gloo (install Debian's libgloo-dev and re-run cmake)";
#endif
  return nullptr;
}

}  // namespace

bool glooBuiltIn() {
#ifdef COMMPERF_HAVE_GLOO
  return true;
#else
  return false;
#endif
}

bool makePeers(const Options& options, int rank, int nranks, Peers& peers, std::string& error) {
  peers.clear();
  for (PeerKind kind : options.peers) {
    std::unique_ptr<Peer> peer = makePeer(kind, options, rank, nranks, error);
    // Every rank must learn whether all ranks connected, or the ones that did would wait for the others.
    int ok = peer ? 1 : 0, allOk = 0;
    MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!allOk) {
      error = std::string("--peer ") + peerName(kind) + ": " +
              (error.empty() ? std::string("setup failed on another rank") : error);
      peers.clear();
      return false;
    }
    peers.push_back(std::move(peer));
  }
  return true;
}

}  // namespace commperf
