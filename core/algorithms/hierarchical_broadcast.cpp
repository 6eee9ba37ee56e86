// Broadcast, hierarchical: the data crosses to each other host once, then spreads inside hosts.
//
//   1. The root's host is led by the root, every other host by its lowest rank; a binomial tree over the
//      H leaders brings the data to each.          wire: (H-1) * n inter-host in all, ceil(log2 H) steps
//   2. Inside each host, a binomial tree from its leader.   wire: (L-1) * n intra-host per host
// (n = count * element size.) A flat binomial tree over ranks numbered across hosts may send the data
// between hosts up to p-1 times.

#include "core/algorithms/algorithms.h"
#include "core/algorithms/small_vector.h"
#include "core/algorithms/sub_channel.h"
#include "topology/host_layout.h"

namespace weft {

void broadcastHierarchical(const CollArgs& args, Channel& channel, const HostLayout& layout) {
  if (args.count == 0) return;
  const int rank = channel.rank();
  const int rootHost = layout.hostOf(args.root);
  auto leaderOf = [&](int host) { return host == rootHost ? args.root : layout.ranksOn(host).front(); };
  const int host = layout.hostOf(rank);
  const int leader = leaderOf(host);

  if (rank == leader) {
    SmallVector<int, 64> leaders;  // on the stack up to 64 hosts
    for (int h = 0; h < layout.numHosts(); ++h) leaders.push_back(leaderOf(h));
    SubChannel leaderChannel(channel, leaders.span());
    CollArgs phase = args;
    phase.root = rootHost;
    broadcastBinomialTree(phase, leaderChannel);  // the root copies sendbuff into recvbuff here too
  }
  SubChannel hostChannel(channel, layout.ranksOn(host));
  CollArgs phase = args;
  phase.sendbuff = args.recvbuff;  // read on the leader only, which holds the data now
  phase.root = layout.localIndex(leader);
  broadcastBinomialTree(phase, hostChannel);
}

}  // namespace weft
