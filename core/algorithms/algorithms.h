// Every collective algorithm Weft has, one per file in this folder. Each runs over any Channel.
//
// Contract shared by all of them:
// - args.count is in elements; AllGather's count is the per-rank send count, ReduceScatter's the
//   per-rank receive count, AllToAll's the count per peer.
// - In place is allowed exactly as the C ABI defines it (weft.h); algorithms must read a rank's input
//   before overwriting it.
// - Reduce writes recvbuff on the root only; Broadcast reads sendbuff on the root only (others may pass
//   NULL).
// - weftAvg reaches an algorithm as weftSum: the caller divides at the end.
// - Every rank ends with bit-identical results for AllReduce (each element is reduced in one place and
//   then copied, or in the same order everywhere).
#pragma once

#include <cstddef>
#include <span>

#include "core/algorithms/channel.h"
#include "weft/weft.h"

namespace weft {

class HostLayout;

// One call of a fused operation: its buffers and its count.
struct FusedCall {
  const void* sendbuff;
  void* recvbuff;  // == sendbuff in place, otherwise apart from every buffer of the operation
  size_t count;
};

struct CollArgs {
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  size_t count = 0;
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;
  int root = 0;
  // Set on a fused AllReduce run by the ring (its only reader): the vector is these calls' buffers end to
  // end, count their total, and sendbuff and recvbuff are unused (vector_layout.h).
  std::span<const FusedCall> calls = {};
};

void allReduceRing(const CollArgs& args, Channel& channel);
void allReduceRecursiveDoubling(const CollArgs& args, Channel& channel);
void allReduceRabenseifner(const CollArgs& args, Channel& channel);
void reduceScatterRing(const CollArgs& args, Channel& channel);
// The ring over a channel whose member j owns block blockPositions[j] of the buffers (empty: block j).
void reduceScatterRingOrdered(const CollArgs& args, Channel& channel, std::span<const int> blockPositions);
void reduceScatterRabenseifner(const CollArgs& args, Channel& channel);
void allGatherRing(const CollArgs& args, Channel& channel);
void allGatherRingOrdered(const CollArgs& args, Channel& channel, std::span<const int> blockPositions);
void allGatherBruck(const CollArgs& args, Channel& channel);
void broadcastBinomialTree(const CollArgs& args, Channel& channel);
void reduceBinomialTree(const CollArgs& args, Channel& channel);
void allToAllPairwise(const CollArgs& args, Channel& channel);
void barrierDissemination(Channel& channel);

// Hierarchical algorithms (one per file, hierarchical_*.cpp): `layout` says which of the channel's ranks
// share a host; most bytes stay inside hosts and the links between them carry as few as possible.
// `betweenHosts` runs the allreduce among hosts (null: recursive doubling below 64 KiB, else the ring).
using AllReduceFunction = void (*)(const CollArgs&, Channel&);
void allReduceHierarchical(const CollArgs& args, Channel& channel, const HostLayout& layout,
                           AllReduceFunction betweenHosts = nullptr);
void allGatherHierarchical(const CollArgs& args, Channel& channel, const HostLayout& layout);
void broadcastHierarchical(const CollArgs& args, Channel& channel, const HostLayout& layout);

}  // namespace weft
