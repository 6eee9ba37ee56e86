// AllGather, Bruck's algorithm (MPICH's MPIR_Allgather_intra_brucks): ceil(log2 p) rounds, for any p.
//
// Rank r gathers the blocks in rotated order in scratch: position i holds the block of rank (r+i) mod p.
//   1. Its own block goes to position 0.
//   2. For d = 1, 2, 4, ... < p: send positions [0, min(d, p-d)) to rank r-d, and receive the same number
//      of blocks from rank r+d into positions [d, ...): they are that rank's first positions, i.e. the
//      blocks of ranks r+d, r+d+1, ... After the round positions [0, min(2d, p)) are filled.
//   3. Rotate into recvbuff: position i goes to block (r+i) mod p.
// Wire, per rank: (p-1) * n bytes (n = count * element size) in ceil(log2 p) messages.
#include <algorithm>
#include <cstring>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/pipeline.h"
#include "core/reduce/reduce.h"

namespace weft {

void allGatherBruck(const CollArgs& args, Channel& channel) {
  const int p = channel.size();
  const int rank = channel.rank();
  const size_t blockBytes = args.count * dataTypeSize(args.type);
  if (args.count == 0) return;
  char* ownBlock = static_cast<char*>(args.recvbuff) + rank * blockBytes;
  if (p == 1) {
    if (args.sendbuff != ownBlock) std::memcpy(ownBlock, args.sendbuff, blockBytes);
    return;
  }

  char* rotated = static_cast<char*>(channel.scratch(0, p * blockBytes));
  std::memcpy(rotated, args.sendbuff, blockBytes);
  for (int distance = 1; distance < p; distance *= 2) {
    const size_t blocks = std::min(distance, p - distance);
    exchange(channel, ringIndex(rank - distance, p), rotated, blocks * blockBytes, ringIndex(rank + distance, p),
             rotated + distance * blockBytes, blocks * blockBytes);
  }
  for (int i = 0; i < p; ++i) {
    char* block = static_cast<char*>(args.recvbuff) + ringIndex(rank + i, p) * blockBytes;
    if (block != args.sendbuff)
      std::memcpy(block, rotated + i * blockBytes, blockBytes);  // in place: already there
  }
}

}  // namespace weft
