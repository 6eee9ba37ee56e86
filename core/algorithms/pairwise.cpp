// AllToAll, pairwise exchange (MPICH's MPIR_Alltoall_intra_pairwise).
//
// Block j of rank r's sendbuff (count elements) goes to block r of rank j's recvbuff. Rank r copies its
// own block, then in steps s = 1 .. p-1 sends block (r+s) mod p to rank r+s and receives block (r-s) mod p
// from rank r-s: every step is a permutation, so each rank sends and receives one block per step and no
// link is oversubscribed. Up to kSegmentsInFlight steps are posted at a time so their latencies overlap.
// In place (sendbuff == recvbuff, beyond the C ABI's conventions), the input is first copied to scratch.
// At 2 ranks the one step goes in segments over tcp (exchangeInSegments, pipeline.h): whole, 4-8 MiB took
// 1.6x the time of the same bytes in segments (2-vCPU Xeon).
// Wire, per rank: (p-1) * n bytes (n = count * element size) in p-1 messages.
#include <algorithm>
#include <array>
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/pipeline.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"

namespace weft {

void allToAllPairwise(const CollArgs& args, Channel& channel) {
  const int p = channel.size();
  const int rank = channel.rank();
  const size_t blockBytes = args.count * dataTypeSize(args.type);
  if (args.count == 0) return;
  const char* input = static_cast<const char*>(args.sendbuff);
  char* output = static_cast<char*>(args.recvbuff);
  if (input == output) {
    char* copy = static_cast<char*>(channel.scratch(0, p * blockBytes));
    copyBytes(copy, input, p * blockBytes);
    input = copy;
  } else {
    copyBytes(output + rank * blockBytes, input + rank * blockBytes, blockBytes);
  }

  if (p == 2) {  // one step, with one peer: in segments where that pays (exchangeInSegments), as Bruck's
    const int other = 1 - rank;
    return exchangeInSegments(channel, other, input + other * blockBytes, blockBytes, output + other * blockBytes,
                              blockBytes, dataTypeSize(args.type));
  }

  std::array<Request, 2 * kSegmentsInFlight> requests;
  for (int first = 1; first < p; first += static_cast<int>(kSegmentsInFlight)) {
    const int last = std::min(p, first + static_cast<int>(kSegmentsInFlight));
    size_t n = 0;
    for (int step = first; step < last; ++step) {
      const int from = ringIndex(rank - step, p);
      requests[n++] = channel.irecv(from, output + from * blockBytes, blockBytes);
    }
    for (int step = first; step < last; ++step) {
      const int to = ringIndex(rank + step, p);
      requests[n++] = channel.isend(to, input + to * blockBytes, blockBytes);
    }
    channel.waitAll({requests.data(), n});
  }
}

}  // namespace weft
