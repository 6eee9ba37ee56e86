// Barrier, dissemination (Hensgen, Finkel and Manber; MPICH's MPIR_Barrier_intra_dissemination).
//
// For d = 1, 2, 4, ... < p: rank r sends a one-byte token to rank r+d and waits for one from rank r-d.
// After the round with distance d, r has heard (directly or through the chain) from ranks r-1 .. r-(2d-1),
// so after ceil(log2 p) rounds it has heard from everyone: nobody leaves before everyone has arrived.
// Wire, per rank: ceil(log2 p) one-byte messages.
#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"

namespace weft {

void barrierDissemination(Channel& channel) {
  const int p = channel.size();
  const int rank = channel.rank();
  const char token = 0;
  char received = 0;
  for (int distance = 1; distance < p; distance *= 2) {
    channel.sendRecv(ringIndex(rank + distance, p), &token, 1, ringIndex(rank - distance, p), &received, 1);
  }
}

}  // namespace weft
