// AllGather, Bruck's algorithm (MPICH's MPIR_Allgather_intra_brucks): ceil(log2 p) rounds, for any p.
//
// Rank r sees recvbuff in rotated order: position i is the block of rank (r+i) mod p.
//   1. Its own block goes to position 0 (block r).
//   2. For d = 1, 2, 4, ... < p: send positions [0, min(d, p-d)) to rank r-d, and receive the same number
//      of blocks from rank r+d into positions [d, ...): they are that rank's first positions, i.e. the
//      blocks of ranks r+d, r+d+1, ... After the round positions [0, min(2d, p)) are filled.
// A run of positions is at most two runs of blocks (it may wrap past block p-1 to block 0), so each
// message is a vectored one straight from and into recvbuff: no scratch and no final rotation (MPICH
// gathers in a temporary buffer and rotates it into place, a copy of all p blocks).
// A round whose two peers are one rank (2d = p: the only round at 2 ranks) goes in segments
// (exchangeInSegments, pipeline.h): whole, at 2 ranks and 8-16 MiB over tcp, it took 1.7x the ring's time
// (2-vCPU Xeon). Other rounds go whole: a segment from rank r+d waits for r+d's segment from r+2d, and so on
// round the ranks, and in segments 3 ranks on the 2 vCPUs took 1.2x longer from 4 MiB.
// Wire, per rank: (p-1) * n bytes (n = count * element size) in ceil(log2 p) messages.
#include <algorithm>
#include <array>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/pipeline.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"

namespace weft {
namespace {

// recvbuff seen from one rank: positions [first, first + blocks) as one or two pieces of recvbuff.
struct RotatedBlocks {
  char* recvbuff;
  int rank;
  int p;
  size_t blockBytes;

  std::span<const BufferPiece> pieces(int first, int blocks, MessagePieces& out) const {
    const int start = ringIndex(rank + first, p);
    const int beforeWrap = std::min(blocks, p - start);
    out[0] = {recvbuff + start * blockBytes, beforeWrap * blockBytes};
    if (beforeWrap == blocks) return {out.data(), 1};
    out[1] = {recvbuff, (blocks - beforeWrap) * blockBytes};
    return {out.data(), 2};
  }
};

}  // namespace

void allGatherBruck(const CollArgs& args, Channel& channel) {
  const int p = channel.size();
  const int rank = channel.rank();
  const size_t blockBytes = args.count * dataTypeSize(args.type);
  if (args.count == 0) return;
  char* recvbuff = static_cast<char*>(args.recvbuff);
  char* ownBlock = recvbuff + rank * blockBytes;
  if (args.sendbuff != ownBlock) copyBytes(ownBlock, args.sendbuff, blockBytes);  // in place: already there

  const RotatedBlocks rotated{recvbuff, rank, p, blockBytes};
  for (int distance = 1; distance < p; distance *= 2) {
    const int blocks = std::min(distance, p - distance);
    const int to = ringIndex(rank - distance, p);
    const int from = ringIndex(rank + distance, p);
    MessagePieces sendPieces{}, recvPieces{};
    const std::span<const BufferPiece> outgoing = rotated.pieces(0, blocks, sendPieces);
    const std::span<const BufferPiece> incoming = rotated.pieces(distance, blocks, recvPieces);
    if (to == from) {  // 2 * distance == p, alike on every rank
      exchangeInSegments(channel, to, outgoing, from, blocks * blockBytes, dataTypeSize(args.type),
                         landInPieces(incoming), kNothingOnArrival);
    } else {
      // The send first, as exchange() does: a transport may start it at once.
      std::array<Request, 2> requests{channel.isendv(to, outgoing), channel.irecvv(from, incoming)};
      channel.waitAll(requests);
    }
  }
}

}  // namespace weft
