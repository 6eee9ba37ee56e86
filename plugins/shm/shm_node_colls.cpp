// The node backend's collectives. p ranks, all on this host; n = bytes of one rank's input (AllGather: its
// block; ReduceScatter and AllToAll: p blocks of n / p).
//
// Staged (the input fits a staging area): each rank copies its input into its own segment, publishes one
// step, and reads what it needs straight out of the peers' segments. One step, except AllReduce above
// reduceAllBytes, which takes two: each rank reduces its slice into its out area, then all copy the slices.
//
// Direct (larger, with CMA): each rank publishes its buffers' addresses and reads the peers' inputs with
// process_vm_readv in chunks that stay in cache while they are reduced; AllReduce and Reduce write the
// reduced slice into the others' output with process_vm_writev. A final step says "done with your
// buffers" before anyone returns. Bytes each rank copies (p ranks):
//   AllReduce      read (p-1) n/p, reduce n/p, write (p-1) n/p      (vs. 2 (p-1) n/p each way for a ring)
//   ReduceScatter  read (p-1) n/p, reduce n/p
//   AllGather      read (p-1) n
//   AllToAll       read (p-1) n/p
//   Broadcast      non-roots read n from the root; from 512 KiB with a CPU per rank, they read n - w and the
//                  root writes w into each (w = n / p, or n / 2p when the root also copies into its output)
//   Reduce         read (p-1) n/p, reduce n/p, write n/p to the root (with a CPU per rank the root's slice
//                  is wider, as it writes nothing)
//
// Runner is declared in shm_node_runner.h; the runs of several collectives in one (lists and batches), which
// reuse its parts, are in shm_node_batches.cpp.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/copy_bytes.h"
#include "shm_node.h"
#include "shm_node_runner.h"

namespace weft::shm {
namespace {

// A direct Broadcast this large lets the root write part of each output (see Runner::rootShare); the split
// falls on a page boundary of the buffers' offsets.
constexpr size_t kShareFromBytes = size_t{512} * 1024;  // below, no faster (128 KiB: slower)

// A staged Broadcast this large, with a CPU per rank, is staged by its root in two halves: the others copy
// the first out while the root copies the second in. Alone (a call between other work), a non-root's copy
// out of the root's cache runs at about half the speed of the root's copy in, so halves bound its wait at 3/4
// of the two copies end to end. Measured at 2 ranks on the 2-vCPU Xeon (2026-12-02, commperf --gap_us 20
// --touch_input, two alternating launches against halves off): 32 KiB 3.50-3.52 -> 3.07-3.15 us, 64 KiB
// 6.56-6.58 -> 5.25-5.40. Quarters gained a little more alone but cost back-to-back calls, where the root runs
// ahead and every published piece takes the line that a close follower is polling (commperf's rounds of ten:
// 32 KiB 12-14 % slower; halves 2-9 %, 64 KiB alike); from 4 KiB in quarters, 8 KiB Broadcasts in long loops
// took 0.82-0.93 us instead of 0.64.
constexpr size_t kBroadcastHalvesFromBytes = size_t{32} * 1024;

}  // namespace

template <typename Copy>
void Runner::forEachPeerAsItArrives(Copy copy) {
  std::vector<int> pending;
  pending.reserve(static_cast<size_t>(p_ - 1));
  for (int i = 1; i < p_; ++i) pending.push_back((me_ + i) % p_);  // each rank starts at another peer
  while (!pending.empty()) copy(c_.waitForAny(pending));
}

void Runner::allReduce() {
  if (bytes_ <= c_.stageLimit(op_.coll)) {
    bool oneStep = bytes_ <= c_.reduceAllBytes();
    stageInput(bytes_, oneStep ? 0 : bytes_);
    copyBytes(myInput(), send_, bytes_);
    c_.publish(&d_);
    c_.waitAll();
    if (oneStep) {
      reduceStaged(recv_, 0, op_.count);  // every rank alike, in rank order: identical results
      return;
    }
    Range s = sliceOf(op_.count, es_, me_, p_);
    reduceStaged(c_.stageOut(me_) + s.begin, s.begin, (s.end - s.begin) / es_);
    c_.publish();
    c_.waitAll();
    for (int r = 0; r < p_; ++r) {
      Range t = sliceOf(op_.count, es_, r, p_);
      copyBytes(recv_ + t.begin, c_.stageOut(r) + t.begin, t.end - t.begin);
    }
    return;
  }
  c_.publish(&d_);
  c_.waitAll();
  Range s = sliceOf(op_.count, es_, me_, p_);
  unsigned char* piece = c_.scratch(kChunkBytes);
  for (size_t off = s.begin; off < s.end; off += kChunkBytes) {
    size_t n = std::min(kChunkBytes, s.end - off);
    reducePeers(recv_ + off, send_ + off, off, n, piece);
    for (int r = 0; r < p_; ++r) {
      if (r != me_) c_.writePeer(r, c_.peerDescriptor(r).recvAddr + off, recv_ + off, n);
    }
  }
  finishDirect();
}

void Runner::reduceScatter() {
  size_t mine = static_cast<size_t>(me_) * bytes_;
  const size_t total = bytes_ * static_cast<size_t>(p_);
  if (total <= c_.stageLimit(op_.coll)) {
    // As AllToAll: the peers read only their blocks, so ours stays out of the staging area and is reduced
    // from sendbuff, unless the output is that block (in place), which the reduction overwrites.
    const bool inPlace = recv_ == send_ + mine;
    stageBlocks(inPlace);
    c_.publish(&d_);
    c_.waitAll();
    reduceStaged(recv_, mine, op_.count, inPlace ? nullptr : send_ + mine);
    return;
  }
  c_.publish(&d_);
  c_.waitAll();
  reduceScatterDirect();
  finishDirect();
}

void Runner::reduceScatterDirect() {
  const size_t mine = static_cast<size_t>(me_) * bytes_;
  unsigned char* piece = c_.scratch(kChunkBytes);
  for (size_t off = 0; off < bytes_; off += kChunkBytes) {
    size_t n = std::min(kChunkBytes, bytes_ - off);
    reducePeers(recv_ + off, send_ + mine + off, mine + off, n, piece);
  }
}

void Runner::allGather() {
  bool staged = bytes_ <= c_.stageLimit(op_.coll);
  if (staged) {
    stageInput(bytes_);
    copyBytes(myInput(), send_, bytes_);
  }
  c_.publish(&d_);
  if (!staged) {
    allGatherDirect();
    return finishDirect();
  }
  c_.waitAll();
  gatherStaged(0);
}

void Runner::allGatherDirect() {
  const size_t outputBytes = bytes_ * static_cast<size_t>(p_);
  if (!ownPartPlaced_ && outBlock(me_) != send_) copyOwn(outBlock(me_), send_, bytes_, outputBytes);
  forEachPeerAsItArrives([&](int r) { c_.readPeer(r, outBlock(r), peerSend(r), bytes_, storesFor(outputBytes)); });
}

void Runner::stageBlocks(bool withOwn) {
  const size_t total = bytes_ * static_cast<size_t>(p_);
  const size_t mine = static_cast<size_t>(me_) * bytes_;
  stageInput(total);
  if (withOwn) {
    copyBytes(myInput(), send_, total);
    return;
  }
  copyBytes(myInput(), send_, mine);
  copyBytes(myInput() + mine + bytes_, send_ + mine + bytes_, total - mine - bytes_);
}

void Runner::reduceStaged(unsigned char* dst, size_t offset, size_t count, const unsigned char* own) {
  auto in = [&](int r) { return r == me_ && own != nullptr ? own : input(r) + offset; };
  if (p_ == 1) {
    copyBytes(dst, in(0), count * es_);
    return;
  }
  c_.reduce(dst, in(0), in(1), count, op_.datatype, op_.op);
  for (int r = 2; r < p_; ++r) c_.reduce(dst, dst, in(r), count, op_.datatype, op_.op);
}

void Runner::gatherStaged(size_t offset) {
  for (int r = 0; r < p_; ++r) {
    unsigned char* dst = outBlock(r);
    if (r != me_) {
      copyBytes(dst, input(r) + offset, bytes_);
    } else if (!ownPartPlaced_ && dst != send_) {
      copyBytes(dst, send_, bytes_);
    }
  }
}

void Runner::allToAll() {
  size_t total = bytes_ * static_cast<size_t>(p_);
  size_t mine = static_cast<size_t>(me_) * bytes_;
  bool staged = total <= c_.stageLimit(op_.coll);
  const unsigned char* source = send_;
  std::vector<unsigned char> copy;
  if (staged) {
    // The peers read only their blocks: ours stays out of the staging area (at 2 ranks, half the bytes to
    // write there, and to be visible to the peer at the publishing step's fence).
    stageBlocks(false);
  } else if (send_ == recv_) {
    // In place, a peer would read our block while we overwrite it: let the peers read a copy.
    copy.assign(send_, send_ + total);
    source = copy.data();
    d_.sendAddr = reinterpret_cast<uint64_t>(source);
  }
  c_.publish(&d_);
  // Our own block first: it needs no peer.
  if (outBlock(me_) != source + mine) {
    if (staged) {
      std::memmove(outBlock(me_), source + mine, bytes_);
    } else {
      copyOwn(outBlock(me_), source + mine, bytes_, total);  // apart: out of place, or from the copy
    }
  }
  if (staged) {
    c_.waitAll();
    for (int r = 0; r < p_; ++r) {
      if (r != me_) copyBytes(outBlock(r), input(r) + mine, bytes_);
    }
    return;
  }
  forEachPeerAsItArrives(
      [&](int r) { c_.readPeer(r, outBlock(r), c_.peerDescriptor(r).sendAddr + mine, bytes_, storesFor(total)); });
  finishDirect();
}

void Runner::broadcast() {
  if (bytes_ <= c_.stageLimit(op_.coll)) return broadcastStaged();
  const int root = op_.root;
  // Direct: the non-roots read the head of the root's input, the root writes the tail into each of them. A
  // non-root waits for the root only, never for the other non-roots: with more ranks than CPUs each wait for
  // all is a round of the scheduler.
  c_.publish(&d_);
  if (me_ == root) {
    c_.waitAll();
  } else {
    c_.waitFor(root);
  }
  const size_t split = bytes_ - rootShare(c_.peerDescriptor(root));
  if (me_ != root) {
    c_.readPeer(root, recv_, c_.peerDescriptor(root).sendAddr, split, storesFor(bytes_));
    c_.publish();                          // done with the root's input
    if (split < bytes_) c_.waitFor(root);  // and the root with our output
    return;
  }
  for (int r = 0; r < p_; ++r) {
    if (r != me_) c_.writePeer(r, c_.peerDescriptor(r).recvAddr + split, send_ + split, bytes_ - split);
  }
  if (recv_ != nullptr && recv_ != send_) copyOwn(recv_, send_, bytes_, bytes_);
  finishDirect();
}

void Runner::broadcastStaged() {
  const int root = op_.root;
  stageInput(bytes_);  // the root's ring holds the input; the others' is unused
  const size_t piece = inline_ ? bytes_ : broadcastPieceBytes();
  const bool inPieces = piece < bytes_;
  if (me_ == root) {
    // In pieces the step goes first, and each piece is published as it lands.
    if (inPieces) {
      c_.startStaging();
    } else {
      copyBytes(myInput(), send_, bytes_);
    }
    c_.publish(&d_);  // the root does not wait: the next collective's first step holds it back
    for (size_t off = 0; inPieces && off < bytes_; off += piece) {
      const size_t n = std::min(piece, bytes_ - off);
      copyBytes(myInput() + off, send_ + off, n);
      c_.staged(off + n);
    }
    if (recv_ != nullptr && recv_ != send_) copyBytes(recv_, send_, bytes_);
    return;
  }
  c_.publish(&d_);
  c_.waitFor(root);
  for (size_t off = 0; off < bytes_; off += piece) {
    const size_t n = std::min(piece, bytes_ - off);
    if (inPieces) c_.waitStaged(root, off + n);
    copyBytes(recv_ + off, input(root) + off, n);
  }
}

void Runner::reduce() {
  int root = op_.root;
  if (bytes_ <= c_.stageLimit(op_.coll)) {
    stageInput(bytes_);
    copyBytes(myInput(), send_, bytes_);
    c_.publish(&d_);
    if (me_ != root) return;  // the next collective's first step waits until the root is done with it
    c_.waitAll();
    reduceStaged(recv_, 0, op_.count);
    return;
  }
  c_.publish(&d_);
  c_.waitAll();
  Range s = reduceSliceOf(me_, root);
  unsigned char* piece = c_.scratch(2 * kChunkBytes);
  for (size_t off = s.begin; off < s.end; off += kChunkBytes) {
    size_t n = std::min(kChunkBytes, s.end - off);
    unsigned char* result = me_ == root ? recv_ + off : piece + kChunkBytes;
    reducePeers(result, send_ + off, off, n, piece);
    if (me_ != root) c_.writePeer(root, c_.peerDescriptor(root).recvAddr + off, result, n);
  }
  finishDirect();
}

void Runner::barrier() {
  c_.publish(&d_);
  c_.waitAll();
}

void Runner::reducePeers(unsigned char* dst, const unsigned char* own, size_t offset, size_t n,
                         unsigned char* piece) {
  const unsigned char* left = own;
  for (int r = 0; r < p_; ++r) {
    if (r == me_) continue;
    const unsigned char* theirs = c_.peerInput(r, peerSend(r) + offset, n, piece);  // in place when mapped
    c_.reduce(dst, left, theirs, n / es_, op_.datatype, op_.op);
    left = dst;
  }
}

size_t Runner::broadcastPieceBytes() const {
  if (!c_.cpuPerRank() || bytes_ < kBroadcastHalvesFromBytes) return bytes_;
  return (bytes_ / 2 + kCacheLine - 1) / kCacheLine * kCacheLine;
}

size_t Runner::rootShare(const NodeDescriptor& rootDescriptor) const {
  if (!c_.cpuPerRank() || bytes_ < kShareFromBytes) return 0;
  bool rootCopies = rootDescriptor.recvAddr != 0 && rootDescriptor.recvAddr != rootDescriptor.sendAddr;
  // Read from a mapped buffer, the non-roots copy as fast as the root does its own copy: nothing to take on.
  if (rootCopies && c_.lists(op_.root, rootDescriptor.sendAddr, bytes_)) return 0;
  size_t share = bytes_ / static_cast<size_t>(p_) / (rootCopies ? 2 : 1);
  return share / kPageBytes * kPageBytes;
}

Range Runner::reduceSliceOf(int r, int root) const {
  if (!c_.cpuPerRank() || p_ == 1) return sliceOf(op_.count, es_, r, p_);
  const double rootWeight = 1.0 + 0.5 / (p_ - 1);
  const size_t align = lineElements(es_);
  auto start = [&](int q) {  // in bytes, ranks in order, the root's slice wider
    const double before = q + (q > root ? rootWeight - 1.0 : 0.0);
    const auto element = static_cast<size_t>(static_cast<double>(op_.count) * before / (p_ - 1 + rootWeight));
    return std::min(element / align * align, op_.count) * es_;
  };
  return {start(r), r == p_ - 1 ? op_.count * es_ : start(r + 1)};
}

void Runner::finishDirect() {
  c_.publish();
  c_.waitAll();
}

void runNodeCollective(NodeComm& comm, const weftBackendOp_v1& op, bool ownPartPlaced) {
  Runner run(comm, op);
  if (ownPartPlaced) run.leaveOwnPart();
  // Nothing to move (its buffers may be NULL): one step still checks that every rank called the same.
  if (op.count == 0) return run.barrier();
  comm.shareBuffers(op);
  switch (op.coll) {
    case weftCollAllReduce:
      return run.allReduce();
    case weftCollReduceScatter:
      return run.reduceScatter();
    case weftCollAllGather:
      return run.allGather();
    case weftCollAllToAll:
      return run.allToAll();
    case weftCollBroadcast:
      return run.broadcast();
    case weftCollReduce:
      return run.reduce();
    case weftCollBarrier:
      return run.barrier();
    default:
      throw NodeError{weftInvalidArgument, std::string("the node backend cannot run ") + nodeCollName(op.coll)};
  }
}

}  // namespace weft::shm
