// Broadcast and Reduce over a binomial tree (MPICH's MPIR_Bcast_intra_binomial and
// MPIR_Reduce_intra_binomial), pipelined in segments (treeSegmentElements: larger over socket transports).
//
// Ranks are numbered relative to the root (relative = (rank - root) mod p). A non-root's parent is its
// relative number with the lowest set bit cleared; its children are relative + d for each power of two d
// below that bit (below p for the root) while relative + d < p. The tree has depth ceil(log2 p).
//
// Broadcast: a rank receives each segment from its parent and forwards it to its children, largest
// subtree first; with kSegmentsInFlight receives posted ahead, segment k+1 travels down one edge while
// segment k travels down the next. Where a link copies large messages once (shm's CMA), a child of the root
// that has no children of its own forwards nothing and gets the message whole: one copy instead of one per
// segment (np 2, node backend off, 256 KiB-1 MiB 1.2-1.6x faster whole, 32 MiB 1.4x). Over sockets it
// gets segments like the others: until the trees' segments grew to 512 KiB there (treeSegmentElements) it
// got the message whole too, which had beaten 128 KiB segments (np 2 over TCP, 1-16 MiB 0.53-0.73 of Open
// MPI's speed -> 0.72-0.88), but 512 KiB segments beat it (2-32 MiB 0.46-0.85 -> 0.68-1.26, three alternating
// launches on a 2-vCPU Xeon, 2026-12-02). Wire: each rank receives n bytes once (n = count * element size)
// and sends n to each child (the root up to ceil(log2 p) * n).
//
// Reduce: a rank receives each segment from all its children (smallest subtree first), reduces them with
// its own input as own op child_1 op child_2 ..., and sends the result to its parent; the next segment's
// receives are posted before this one is reduced. The root's reductions land in recvbuff; other inner
// ranks accumulate in scratch (recvbuff is only the root's), and leaves send straight from sendbuff.
// Wire: each non-root sends n bytes once; a rank receives n from each child.
#include <algorithm>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/pipeline.h"
#include "core/algorithms/small_vector.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"

namespace weft {
namespace {

struct BinomialTree {
  BinomialTree(int rank, int root, int p) : root(root), p(p), relative(ringIndex(rank - root, p)) {
    // The lowest set bit of `relative`; for the root, the first power of two >= p.
    while (subtreeSpan < p && (relative & subtreeSpan) == 0) subtreeSpan *= 2;
  }
  bool isRoot() const { return relative == 0; }
  int parent() const { return toRank(relative - subtreeSpan); }
  // Children, largest subtree first: at most one per bit of an int.
  using Children = SmallVector<int, 32>;
  Children children() const {
    Children ranks;
    for (int d = subtreeSpan / 2; d >= 1; d /= 2) {
      if (relative + d < p) ranks.push_back(toRank(relative + d));
    }
    return ranks;
  }
  int toRank(int relativeRank) const { return ringIndex(relativeRank + root, p); }

  int root;
  int p;
  int relative;
  int subtreeSpan = 1;
};

// Elements per segment of a tree's pipeline: the ring's segments where some link copies a large message once
// (shm), four times larger where every link streams through socket buffers (tcp), since there each segment
// costs the transport a round of system calls the tree does not hide. Measured over tcp (2-vCPU Xeon,
// 2026-12-02, Reduce, two launches each): at 2 ranks 2-16 MiB 1.5-1.8x faster in 512 KiB segments than in
// 128 KiB (4 MiB 1271-1396 -> 746-823 us, 16 MiB 5200-5340 -> 3034-3361), 256 KiB and 1 MiB in between; at
// 3 and 4 ranks on the 2 vCPUs alike or faster, Broadcast too. Over shm (node backend off) 512 KiB made
// Reduce 1.5x slower, hence both.
size_t treeSegmentElements(const Channel& channel, size_t elemSize) {
  constexpr size_t kSocketSegmentFactor = 4;
  const size_t elements = segmentElements(elemSize);
  return channel.copiesLargeMessagesOnce() ? elements : kSocketSegmentFactor * elements;
}

}  // namespace

void broadcastBinomialTree(const CollArgs& args, Channel& channel) {
  const int p = channel.size();
  const size_t elemSize = dataTypeSize(args.type);
  if (args.count == 0) return;
  const BinomialTree tree(channel.rank(), args.root, p);
  const size_t bytes = args.count * elemSize;
  auto copyRootInput = [&] {
    if (tree.isRoot() && args.sendbuff != args.recvbuff) copyBytes(args.recvbuff, args.sendbuff, bytes);
  };
  if (p == 1) return copyRootInput();

  auto getsWhole = [&](int rank) {
    const BinomialTree node(rank, args.root, p);
    return channel.copiesLargeMessagesOnce() && !node.isRoot() && node.parent() == args.root &&
           node.children().empty();
  };
  if (getsWhole(channel.rank())) return channel.recv(args.root, args.recvbuff, bytes);

  // The root sends out of sendbuff, so that its own copy can wait until the sends are posted; the others
  // forward what they received.
  const void* data = tree.isRoot() ? args.sendbuff : args.recvbuff;
  BinomialTree::Children children;  // those that get segments, largest subtree first
  BinomialTree::Children wholeChildren;
  for (int child : tree.children()) (getsWhole(child) ? wholeChildren : children).push_back(child);
  const size_t segmentCount = ceilDiv(args.count, treeSegmentElements(channel, elemSize));
  const Partition segments(args.count, segmentCount);

  std::array<PendingRecv, kSegmentsInFlight> window{};
  auto postRecv = [&](size_t segment) {
    window[segment % kSegmentsInFlight].post(channel, tree.parent(),
                                             elementAt(args.recvbuff, segments.offset(segment), elemSize),
                                             segments.count(segment) * elemSize);
  };
  if (!tree.isRoot()) {
    for (size_t segment = 0; segment < kSegmentsInFlight && segment < segmentCount; ++segment) postRecv(segment);
  }

  // Sends are outstanding at most until the next receive: a tree has no cycle for them to wait round, so
  // the root may post every segment at once.
  SendQueue sends(channel);
  for (size_t segment = 0; segment < segmentCount; ++segment) {
    if (!tree.isRoot()) {
      sends.waitWith(window[segment % kSegmentsInFlight]);
      if (segment + kSegmentsInFlight < segmentCount) postRecv(segment + kSegmentsInFlight);
    }
    for (int child : children) {
      sends.post(child, elementAt(data, segments.offset(segment), elemSize), segments.count(segment) * elemSize);
    }
  }
  for (int child : wholeChildren) sends.post(child, data, bytes);
  copyRootInput();
  sends.completeAll();
}

void reduceBinomialTree(const CollArgs& args, Channel& channel) {
  const int p = channel.size();
  const size_t elemSize = dataTypeSize(args.type);
  const size_t bytes = args.count * elemSize;
  if (args.count == 0) return;
  const BinomialTree tree(channel.rank(), args.root, p);
  if (p == 1) {
    if (args.sendbuff != args.recvbuff) copyBytes(args.recvbuff, args.sendbuff, bytes);
    return;
  }

  BinomialTree::Children children = tree.children();
  std::reverse(children.begin(), children.end());  // smallest subtree first
  const size_t segmentCount = ceilDiv(args.count, treeSegmentElements(channel, elemSize));
  const Partition segments(args.count, segmentCount);
  SendQueue sends(channel);

  if (children.empty()) {  // a leaf: its input is its partial result
    for (size_t segment = 0; segment < segmentCount; ++segment) {
      sends.post(tree.parent(), elementAt(args.sendbuff, segments.offset(segment), elemSize),
                 segments.count(segment) * elemSize);
    }
    sends.completeAll();
    return;
  }

  void* result = tree.isRoot() ? args.recvbuff : channel.scratch(1, bytes);
  // Two sets of one slot per child: segment k+1 arrives in set (k+1) % 2 while segment k is reduced
  // out of set k % 2.
  const size_t childCount = children.size();
  const size_t slotBytes = segments.largest() * elemSize;
  char* slots = static_cast<char*>(channel.scratch(0, 2 * childCount * slotBytes));
  auto slotOf = [&](size_t segment, size_t child) {
    return slots + ((segment % 2) * childCount + child) * slotBytes;
  };
  SmallVector<PendingRecv, 64> pending;
  pending.assign(2 * childCount);
  auto postRecvs = [&](size_t segment) {
    for (size_t c = 0; c < childCount; ++c) {
      pending[(segment % 2) * childCount + c].post(channel, children[c], slotOf(segment, c),
                                                   segments.count(segment) * elemSize);
    }
  };

  postRecvs(0);
  for (size_t segment = 0; segment < segmentCount; ++segment) {
    if (segment + 1 < segmentCount) postRecvs(segment + 1);
    const size_t n = segments.count(segment);
    char* out = elementAt(result, segments.offset(segment), elemSize);
    for (size_t c = 0; c < childCount; ++c) {
      sends.waitWith(pending[(segment % 2) * childCount + c]);
      // In place on the root, out is exactly the input: reduce() allows that aliasing.
      if (c == 0) {
        reduce(out, elementAt(args.sendbuff, segments.offset(segment), elemSize), slotOf(segment, c), n, args.type,
               args.op);
      } else {
        reduceInto(out, slotOf(segment, c), n, args.type, args.op);
      }
    }
    if (!tree.isRoot()) sends.post(tree.parent(), out, n * elemSize);
  }
  sends.completeAll();
}

}  // namespace weft
