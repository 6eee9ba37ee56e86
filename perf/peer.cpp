// Picks the peer named by --peer. Gloo is optional at build time: without it, --peer gloo is an error that
// says so rather than a missing option.
#include <mpi.h>

#include "peer.h"
#include "peer_internal.h"

namespace commperf {

bool glooBuiltIn() {
#ifdef COMMPERF_HAVE_GLOO
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Peer> makePeer(const Options& options, int rank, int nranks, std::string& error) {
  std::unique_ptr<Peer> peer;
  switch (options.peer) {
    case PeerKind::kNone:
      return nullptr;
    case PeerKind::kMpi:
      return makeMpiPeer();
    case PeerKind::kGloo:
#ifdef COMMPERF_HAVE_GLOO
      try {
        peer = makeGlooPeer(rank, nranks, options.glooAllreduce);
      } catch (const std::exception& e) {
        error = std::string("Gloo setup failed on rank ") + std::to_string(rank) + ": " + e.what();
      }
      break;
#else
      (void)rank;
      (void)nranks;
      error = "commperf was built without Gloo (install Debian's libgloo-dev and re-run cmake)";
      return nullptr;
#endif
  }
  // Every rank must learn whether all ranks connected, or the ones that did would wait for the others.
  int ok = peer ? 1 : 0, allOk = 0;
  MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!allOk) {
    if (error.empty()) error = "Gloo setup failed on another rank";
    return nullptr;
  }
  return peer;
}

}  // namespace commperf
