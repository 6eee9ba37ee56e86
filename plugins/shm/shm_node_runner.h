// Private to the shm plugin: Runner, which runs one collective of the node backend (defined, with how each
// collective moves its bytes, in shm_node_colls.cpp), and the helpers it shares with the list and batch
// runners (shm_node_batches.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/copy_bytes.h"
#include "shm_node.h"

namespace weft::shm {

// Peers' data is read in pieces of this size: small enough to stay in L2 while it is reduced.
inline constexpr size_t kChunkBytes = size_t{256} * 1024;

struct Range {
  size_t begin;  // bytes
  size_t end;
};

// Elements of one cache line (1 for elements of a line or more): slices start on multiples of it, so that no
// two ranks write one line.
inline size_t lineElements(size_t elementBytes) { return elementBytes >= 64 ? 1 : 64 / elementBytes; }

// Rank r's share of `count` elements, in bytes; slices start on cache lines so no two ranks write one.
inline Range sliceOf(size_t count, size_t elementBytes, int r, int p) {
  size_t align = lineElements(elementBytes);
  size_t per = (count + static_cast<size_t>(p) - 1) / static_cast<size_t>(p);
  per = (per + align - 1) / align * align;
  size_t begin = std::min(per * static_cast<size_t>(r), count);
  size_t end = std::min(begin + per, count);
  return {begin * elementBytes, end * elementBytes};
}

inline NodeDescriptor describe(const weftBackendOp_v1& op) {
  NodeDescriptor d{};
  d.coll = static_cast<uint32_t>(op.coll);
  d.datatype = static_cast<uint32_t>(op.datatype);
  d.op = static_cast<uint32_t>(op.op);
  d.root = op.root;
  d.count = op.count;
  d.sendAddr = reinterpret_cast<uint64_t>(op.sendbuff);
  d.recvAddr = reinterpret_cast<uint64_t>(op.recvbuff);
  return d;
}

class Runner {
 public:
  Runner(NodeComm& comm, const weftBackendOp_v1& op)
      : c_(comm),
        op_(op),
        p_(comm.nranks()),
        me_(comm.rank()),
        es_(plugin::elementBytes(op.datatype)),
        bytes_(op.count * es_),
        send_(static_cast<const unsigned char*>(op.sendbuff)),
        recv_(static_cast<unsigned char*>(op.recvbuff)),
        d_(describe(op)) {}

  void allReduce();
  void reduceScatter();

  // A direct ReduceScatter's work between its first step and its last: this rank's block of every peer's
  // input, read and reduced in chunks.
  void reduceScatterDirect();

  void allGather();

  // A direct AllGather's work between its first step and its last: our block copied into our output, then
  // every peer's read into it as that peer arrives.
  void allGatherDirect();

  // This rank's part of the output already holds its input (an AllGather run from a copy: runFromCopy): the
  // copies into it are skipped.
  void leaveOwnPart() { ownPartPlaced_ = true; }

  // Where rank r's input to this collective lies (for a batch: its call's, see runNodeDirectBatch).
  void setPeerSends(const uint64_t* sends) { peerSends_ = sends; }

  // The staged parts, for one call of a batch too (runNodeBatch), whose input lies at `offset` in every
  // rank's staging area: dst = input(0)[offset..] op input(1)[offset..] op ... for count elements, in rank
  // order; AllGather's blocks copied out. `own`, when set, is this rank's part, read there instead of from
  // its staging area (which then need not hold it); it must not overlap dst.
  void reduceStaged(unsigned char* dst, size_t offset, size_t count, const unsigned char* own = nullptr);
  void gatherStaged(size_t offset);
  // Stages the p blocks of an AllToAll's or ReduceScatter's input, all but this rank's own (which no peer
  // reads) unless withOwn.
  void stageBlocks(bool withOwn);

  void allToAll();
  void broadcast();
  void broadcastStaged();
  void reduce();
  void barrier();

 private:
  // Where a staged collective's input (`inBytes` per rank) goes: a collective of one step (`outBytes` 0)
  // whose input fits kTinyBytes carries it in its descriptor (d_), one that fits kInlineBytes next to its
  // step; otherwise the staging ring.
  void stageInput(size_t inBytes, size_t outBytes = 0) {
    inline_ = outBytes == 0 && inBytes <= kInlineBytes;
    tiny_ = inline_ && inBytes <= kTinyBytes;
    if (!inline_) c_.stage(inBytes, outBytes);
  }
  unsigned char* myInput() {
    if (tiny_) return tinyBytes(d_);
    return inline_ ? c_.nextInline() : c_.stageIn(me_);
  }
  const unsigned char* input(int r) const {
    if (tiny_) return tinyBytes(c_.peerDescriptor(r));
    return inline_ ? c_.peerInline(r) : c_.stageIn(r);
  }

  // dst = own op every peer's sendbuff[offset, offset + n), each peer's piece read into `piece` first.
  void reducePeers(unsigned char* dst, const unsigned char* own, size_t offset, size_t n, unsigned char* piece);

  // The bytes of a direct Broadcast that the root writes into each non-root (from the end), decided alike on
  // every rank from the root's descriptor. With a CPU per rank the root would otherwise wait idle while the
  // p - 1 others each copy n: the root takes n / p of each when it has no copy of its own to make (in place,
  // or no output), half that when it also copies its input into its output. Measured at 2 ranks on 2 CPUs
  // (2-32 MiB): in place 2.1-2.7x faster than the non-root copying all; out of place 1.15-1.25x (with n / p
  // there, the root's own copy made it the slower side). Nothing when the root copies and its input is a
  // weftMemAlloc buffer that peers map: their memcpy is as fast as the root's own copy.
  size_t rootShare(const NodeDescriptor& rootDescriptor) const;
  // The pieces a staged Broadcast's root stages its input in (bytes_: all at once; kBroadcastHalvesFromBytes).
  size_t broadcastPieceBytes() const;

  // A direct Reduce's slice of rank r. Per byte of its slice every rank reads and reduces p - 1 inputs, and
  // a non-root also writes the result to the root. A write costing about half a read-and-reduce, the root's
  // slice is 1 + 1 / (2 (p - 1)) times the others' when every rank has a CPU (2 ranks on 2 CPUs, 512 KiB-
  // 32 MiB: 10-25 % faster than equal slices). With more ranks than CPUs only the total work counts: equal
  // slices, as every other collective's.
  Range reduceSliceOf(int r, int root) const;

  // Rank r's block of an AllGather's or AllToAll's output.
  unsigned char* outBlock(int r) const { return recv_ + static_cast<size_t>(r) * bytes_; }

  uint64_t peerSend(int r) const { return peerSends_ != nullptr ? peerSends_[r] : c_.peerDescriptor(r).sendAddr; }

  // copy(r) for every peer r, each as soon as r has published this collective's first step (its buffers'
  // addresses): where ranks share CPUs, the peers already there are copied from before this rank waits.
  template <typename Copy>
  void forEachPeerAsItArrives(Copy copy);

  // Nobody returns (and lets its caller reuse the buffers) while a peer may still read or write them.
  void finishDirect();

  // A direct collective's copy of this rank's own part into its output, which no peer reads: with stores that
  // bypass the caches (streamBytes) when the host's ranks write kStreamFromHostBytes of results or more
  // together (outputBytes: this rank's), as core's copies out of its bounce buffers. Measured (float, heap
  // buffers, out of place, 2-vCPU AMD EPYC Zen 3, 2026-11-30, two alternating launches per build, Open MPI /
  // Weft in the same launch): np 2 AllGather 32 MiB 0.97-1.09 -> 1.10-1.16, AllToAll 32 MiB 0.94-1.00 ->
  // 1.11-1.13, Broadcast 32 MiB 1.07 -> 1.14-1.17; np 4 AllGather 8 MiB 1.28-1.34 -> 1.65-1.73.
  void copyOwn(unsigned char* dst, const unsigned char* src, size_t n, size_t outputBytes) const {
    copyResult(dst, src, n, storesFor(outputBytes) == NodeComm::Stores::Streamed);
  }
  // How copies into this rank's output (outputBytes of it) store: see copyOwn. Reads of a peer's block from
  // a buffer it maps (weftMemAlloc's) store the same way. Measured (weftMemAlloc buffers, as above): np 2
  // AllGather 32 MiB 1.53-1.69 -> 1.89-1.92, AllToAll 32 MiB 1.43-1.53 -> 1.69-1.80, Broadcast 32 MiB
  // 1.59-1.68 -> 1.76-2.25; np 4 AllGather 32 MiB 1.46-1.80 -> 2.09-2.43.
  NodeComm::Stores storesFor(size_t outputBytes) const {
    return streamsResults(outputBytes, static_cast<size_t>(p_)) ? NodeComm::Stores::Streamed
                                                                : NodeComm::Stores::Cached;
  }

  NodeComm& c_;
  const weftBackendOp_v1& op_;
  int p_;
  int me_;
  size_t es_;
  size_t bytes_;  // one rank's count in bytes (AllToAll, ReduceScatter: one block)
  const unsigned char* send_;
  unsigned char* recv_;
  NodeDescriptor d_;  // what this rank publishes with the collective's first step
  bool inline_ = false;
  bool tiny_ = false;
  const uint64_t* peerSends_ = nullptr;  // per rank; null: the descriptors' sendAddr
  bool ownPartPlaced_ = false;           // leaveOwnPart()
};

}  // namespace weft::shm
