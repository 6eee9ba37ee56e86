// AllGather, hierarchical: every rank's block crosses to each other host once.
//
// H hosts, each with L ranks (a uniform layout), n = block bytes (count * element size):
//   1. Among the H ranks with the same local index i, one per host: a ring passes their blocks round, so
//      each holds the blocks of local rank i of every host.      wire, per rank: (H-1) * n, inter-host
//   2. Inside each host: a ring passes those sets of H blocks round, so each rank holds all p blocks.
//                                                                 wire, per rank: (L-1) * H * n, intra-host
// Each host sends L * (H-1) * n bytes to other hosts in all; a flat ring in host order sends (p-1) * n
// over each of its edges between hosts.
//
// Hosts with different numbers of ranks: one ring over all ranks in host order, which crosses between
// hosts only H times. Blocks always land at their rank's position of recvbuff; a step sends each block of
// a set as one message, straight from and into recvbuff (in place is free: a rank's block is first placed
// at its position, when it is not there already).
#include <algorithm>
#include <iterator>
#include <span>
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/small_vector.h"
#include "core/algorithms/sub_channel.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"
#include "topology/host_layout.h"

namespace weft {
namespace {

// A ring over `channel` where member j starts with the blocks unitOf(j) lists (ranks of the whole
// communicator, whose blocks live at those positions of recvbuff). At step s member j sends unit
// (j - s) mod k to its right and receives unit (j - s - 1) mod k from its left.
template <typename UnitOf>
void ringOfUnits(Channel& channel, UnitOf unitOf, void* recvbuff, size_t blockBytes) {
  const int k = channel.size();
  const int j = channel.rank();
  const int right = ringIndex(j + 1, k);
  const int left = ringIndex(j - 1, k);
  auto at = [&](int block) { return elementAt(recvbuff, block, blockBytes); };
  SmallVector<Request, 64> requests;  // two per block of a unit; on the stack up to 32 hosts
  for (int s = 0; s + 1 < k; ++s) {
    requests.clear();
    const std::span<const int> received = unitOf(ringIndex(j - s - 1, k));
    const std::span<const int> sent = unitOf(ringIndex(j - s, k));
    std::transform(received.begin(), received.end(), std::back_inserter(requests),
                   [&](int block) { return channel.irecv(left, at(block), blockBytes); });
    std::transform(sent.begin(), sent.end(), std::back_inserter(requests),
                   [&](int block) { return channel.isend(right, at(block), blockBytes); });
    channel.waitAll(requests.span());
  }
}

// One unit per member: its own block (member j is rank members[j] of the communicator).
auto oneBlockEach(std::span<const int> members) {
  return [members](int j) { return members.subspan(static_cast<size_t>(j), 1); };
}

}  // namespace

void allGatherHierarchical(const CollArgs& args, Channel& channel, const HostLayout& layout) {
  const size_t blockBytes = args.count * dataTypeSize(args.type);
  if (blockBytes == 0) return;
  const int rank = channel.rank();
  char* own = elementAt(args.recvbuff, rank, blockBytes);
  if (args.sendbuff != own) copyBytes(own, args.sendbuff, blockBytes);

  if (!layout.uniform()) {
    const std::vector<int>& order = layout.hostOrder();
    SubChannel ring(channel, order);
    return ringOfUnits(ring, oneBlockEach(order), args.recvbuff, blockBytes);
  }
  const int index = layout.localIndex(rank);
  // Phase 1: among the ranks with my local index.
  const std::vector<int>& slicePeers = layout.ranksWithIndex(index);
  SubChannel sliceChannel(channel, slicePeers);
  ringOfUnits(sliceChannel, oneBlockEach(slicePeers), args.recvbuff, blockBytes);
  // Phase 2: inside my host, each local index carrying the blocks of that index on every host.
  SubChannel hostChannel(channel, layout.ranksOn(layout.hostOf(rank)));
  ringOfUnits(
      hostChannel, [&](int i) { return std::span<const int>(layout.ranksWithIndex(i)); }, args.recvbuff,
      blockBytes);
}

}  // namespace weft
