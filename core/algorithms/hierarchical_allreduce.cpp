// AllReduce, hierarchical: most bytes stay inside hosts, the slow links between hosts carry each byte of
// the result once per direction.
//
// H hosts, each with L ranks (a uniform layout), n = vector bytes. Rank i of every host (its local index)
// owns slice i of the vector (n/L bytes; the count % L trailing elements are handled last, see below):
//   1. Reduce-scatter inside each host (ring over its L ranks): local rank i holds slice i reduced over
//      its host.                                                  wire, per rank: (L-1)/L * n, intra-host
//   2. AllReduce of slice i among the H ranks with local index i, one per host, by the algorithm the
//      caller names (the tuner's, for H ranks between hosts; by default ring for large slices, recursive
//      doubling for small ones).                  wire, per rank: 2(H-1)/H * n/L (ring), inter-host
//   3. AllGather inside each host (ring): every rank gets every slice.  (L-1)/L * n per rank, intra-host
// So each host sends 2(H-1)/H * n bytes to other hosts, where a flat ring sends 2(p-1)/p * n over every
// edge it has between hosts. The trailing count % L elements (fewer than L) go by a flat recursive
// doubling over all ranks.
//
// Hosts with different numbers of ranks: the host's ranks reduce to its lowest rank (binomial tree), the
// H leaders allreduce, and each leader broadcasts to its host (binomial tree); inter-host wire as above
// for the leaders, n per leader per step for the trees.
//
// Every element is reduced by one rank of each phase-2 allreduce and copied from there, so all ranks end
// bit-identical; the order of the reduction differs from a flat algorithm's (floats may differ from it in
// the last bits).
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/sub_channel.h"
#include "core/reduce/reduce.h"
#include "topology/host_layout.h"

namespace weft {
namespace {

// Slices below this go by recursive doubling between hosts: latency-bound (the tuner's small-message cut).
constexpr size_t kInterHostRingBytes = size_t{64} << 10;

void allReduceBySize(const CollArgs& args, Channel& channel) {
  if (args.count * dataTypeSize(args.type) < kInterHostRingBytes) return allReduceRecursiveDoubling(args, channel);
  allReduceRing(args, channel);
}

void bySlice(const CollArgs& args, Channel& channel, const HostLayout& layout, AllReduceFunction allReduceAmong) {
  const int rank = channel.rank();
  const int host = layout.hostOf(rank);
  const int index = layout.localIndex(rank);
  const size_t local = layout.ranksOn(host).size();
  const size_t elemSize = dataTypeSize(args.type);
  const size_t sliceCount = args.count / local;
  const size_t sliced = sliceCount * local;

  if (sliceCount > 0) {
    SubChannel hostChannel(channel, layout.ranksOn(host));
    char* mySlice = elementAt(args.recvbuff, index * sliceCount, elemSize);
    CollArgs phase = args;
    phase.count = sliceCount;
    phase.recvbuff = mySlice;  // in place when sendbuff is recvbuff (ReduceScatter's in-place rule)
    reduceScatterRing(phase, hostChannel);

    SubChannel sliceChannel(channel, layout.ranksWithIndex(index));
    phase.sendbuff = mySlice;
    allReduceAmong(phase, sliceChannel);

    phase.recvbuff = args.recvbuff;  // in place: sendbuff is recvbuff + index * sliceCount
    allGatherRing(phase, hostChannel);
  }
  if (sliced < args.count) {
    CollArgs tail = args;
    tail.sendbuff = elementAt(args.sendbuff, sliced, elemSize);
    tail.recvbuff = elementAt(args.recvbuff, sliced, elemSize);
    tail.count = args.count - sliced;
    allReduceRecursiveDoubling(tail, channel);
  }
}

void throughLeaders(const CollArgs& args, Channel& channel, const HostLayout& layout,
                    AllReduceFunction allReduceAmong) {
  const int rank = channel.rank();
  const int host = layout.hostOf(rank);
  SubChannel hostChannel(channel, layout.ranksOn(host));
  CollArgs phase = args;
  phase.root = 0;  // the host's lowest rank leads it
  reduceBinomialTree(phase, hostChannel);
  if (layout.localIndex(rank) == 0) {
    SubChannel leaders(channel, layout.ranksWithIndex(0));
    phase.sendbuff = args.recvbuff;
    allReduceAmong(phase, leaders);
  }
  phase.sendbuff = args.recvbuff;  // read on the leader only
  broadcastBinomialTree(phase, hostChannel);
}

}  // namespace

void allReduceHierarchical(const CollArgs& args, Channel& channel, const HostLayout& layout,
                           AllReduceFunction betweenHosts) {
  if (args.count == 0) return;
  if (betweenHosts == nullptr) betweenHosts = allReduceBySize;
  if (layout.uniform()) return bySlice(args, channel, layout, betweenHosts);
  throughLeaders(args, channel, layout, betweenHosts);
}

}  // namespace weft
