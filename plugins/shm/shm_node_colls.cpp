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
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "shm_node.h"

namespace weft::shm {
namespace {

// Peers' data is read in pieces of this size: small enough to stay in L2 while it is reduced.
constexpr size_t kChunkBytes = size_t{256} * 1024;
// A direct Broadcast this large lets the root write part of each output (see Runner::rootShare); the split
// falls on a page boundary of the buffers' offsets.
constexpr size_t kShareFromBytes = size_t{512} * 1024;  // below, no faster (128 KiB: slower)
constexpr size_t kPageBytes = 4096;

struct Range {
  size_t begin;  // bytes
  size_t end;
};

// Elements of one cache line (1 for elements of a line or more): slices start on multiples of it, so that no
// two ranks write one line.
size_t lineElements(size_t elementBytes) { return elementBytes >= 64 ? 1 : 64 / elementBytes; }

// Rank r's share of `count` elements, in bytes; slices start on cache lines so no two ranks write one.
Range sliceOf(size_t count, size_t elementBytes, int r, int p) {
  size_t align = lineElements(elementBytes);
  size_t per = (count + static_cast<size_t>(p) - 1) / static_cast<size_t>(p);
  per = (per + align - 1) / align * align;
  size_t begin = std::min(per * static_cast<size_t>(r), count);
  size_t end = std::min(begin + per, count);
  return {begin * elementBytes, end * elementBytes};
}

NodeDescriptor describe(const weftBackendOp_v1& op) {
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
        recv_(static_cast<unsigned char*>(op.recvbuff)) {}

  void allReduce() {
    NodeDescriptor d = describe(op_);
    if (bytes_ <= c_.stageLimit(op_.coll)) {
      bool oneStep = bytes_ <= c_.reduceAllBytes();
      useInline(oneStep ? bytes_ : kNoInline);
      std::memcpy(myInput(), send_, bytes_);
      c_.publish(&d);
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
        std::memcpy(recv_ + t.begin, c_.stageOut(r) + t.begin, t.end - t.begin);
      }
      return;
    }
    c_.publish(&d);
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

  void reduceScatter() {
    NodeDescriptor d = describe(op_);
    size_t mine = static_cast<size_t>(me_) * bytes_;
    if (bytes_ * static_cast<size_t>(p_) <= c_.stageLimit(op_.coll)) {
      useInline(bytes_ * static_cast<size_t>(p_));
      std::memcpy(myInput(), send_, bytes_ * static_cast<size_t>(p_));
      c_.publish(&d);
      c_.waitAll();
      reduceStaged(recv_, mine, op_.count);
      return;
    }
    c_.publish(&d);
    c_.waitAll();
    reduceScatterDirect();
    finishDirect();
  }

  // A direct ReduceScatter's work between its first step and its last: this rank's block of every peer's
  // input, read and reduced in chunks.
  void reduceScatterDirect() {
    const size_t mine = static_cast<size_t>(me_) * bytes_;
    unsigned char* piece = c_.scratch(kChunkBytes);
    for (size_t off = 0; off < bytes_; off += kChunkBytes) {
      size_t n = std::min(kChunkBytes, bytes_ - off);
      reducePeers(recv_ + off, send_ + mine + off, mine + off, n, piece);
    }
  }

  void allGather() {
    NodeDescriptor d = describe(op_);
    bool staged = bytes_ <= c_.stageLimit(op_.coll);
    useInline(bytes_);
    if (staged) std::memcpy(myInput(), send_, bytes_);
    c_.publish(&d);
    c_.waitAll();
    if (!staged) {
      allGatherDirect();
      return finishDirect();
    }
    gatherStaged(0);
  }

  // A direct AllGather's work between its first step and its last: every peer's block read into ours.
  void allGatherDirect() {
    for (int r = 0; r < p_; ++r) {
      unsigned char* dst = recv_ + static_cast<size_t>(r) * bytes_;
      if (r != me_) {
        c_.readPeer(r, dst, peerSend(r), bytes_);
      } else if (dst != send_) {
        std::memcpy(dst, send_, bytes_);
      }
    }
  }

  // Where rank r's input to this collective lies (for a batch: its call's, see runNodeDirectBatch).
  void setPeerSends(const uint64_t* sends) { peerSends_ = sends; }

  // The staged parts, for one call of a batch too (runNodeBatch), whose input lies at `offset` in every
  // rank's staging area: dst = input(0)[offset..] op input(1)[offset..] op ... for count elements, in rank
  // order; AllGather's blocks copied out.
  void reduceStaged(unsigned char* dst, size_t offset, size_t count) {
    if (p_ == 1) {
      std::memcpy(dst, input(0) + offset, count * es_);
      return;
    }
    c_.reduce(dst, input(0) + offset, input(1) + offset, count, op_.datatype, op_.op);
    for (int r = 2; r < p_; ++r) c_.reduce(dst, dst, input(r) + offset, count, op_.datatype, op_.op);
  }
  void gatherStaged(size_t offset) {
    for (int r = 0; r < p_; ++r) {
      unsigned char* dst = recv_ + static_cast<size_t>(r) * bytes_;
      if (r != me_) {
        std::memcpy(dst, input(r) + offset, bytes_);
      } else if (dst != send_) {
        std::memcpy(dst, send_, bytes_);
      }
    }
  }

  void allToAll() {
    NodeDescriptor d = describe(op_);
    size_t total = bytes_ * static_cast<size_t>(p_);
    size_t mine = static_cast<size_t>(me_) * bytes_;
    bool staged = total <= c_.stageLimit(op_.coll);
    const unsigned char* source = send_;
    std::vector<unsigned char> copy;
    if (staged) {
      useInline(total);
      std::memcpy(myInput(), send_, total);
      source = myInput();
    } else if (send_ == recv_) {
      // In place, a peer would read our block while we overwrite it: let the peers read a copy.
      copy.assign(send_, send_ + total);
      source = copy.data();
      d.sendAddr = reinterpret_cast<uint64_t>(source);
    }
    c_.publish(&d);
    c_.waitAll();
    for (int r = 0; r < p_; ++r) {
      unsigned char* dst = recv_ + static_cast<size_t>(r) * bytes_;
      if (r == me_) {
        if (dst != source + mine) std::memmove(dst, source + mine, bytes_);
      } else if (staged) {
        std::memcpy(dst, input(r) + mine, bytes_);
      } else {
        c_.readPeer(r, dst, c_.peerDescriptor(r).sendAddr + mine, bytes_);
      }
    }
    if (!staged) finishDirect();
  }

  void broadcast() {
    NodeDescriptor d = describe(op_);
    int root = op_.root;
    bool staged = bytes_ <= c_.stageLimit(op_.coll);
    useInline(bytes_);
    if (staged && me_ == root) std::memcpy(myInput(), send_, bytes_);
    c_.publish(&d);
    if (!staged) {
      c_.waitAll();
    } else if (me_ != root) {
      c_.waitFor(root);  // staged, the root does not wait: the next collective's first step holds it back
    }
    if (staged) {
      if (me_ != root) {
        std::memcpy(recv_, input(root), bytes_);
      } else if (recv_ != nullptr && recv_ != send_) {
        std::memcpy(recv_, send_, bytes_);
      }
      return;
    }
    // Direct: the non-roots read the head of the root's input, the root writes the tail into each of them.
    const size_t split = bytes_ - rootShare(c_.peerDescriptor(root));
    if (me_ != root) {
      c_.readPeer(root, recv_, c_.peerDescriptor(root).sendAddr, split);
    } else {
      for (int r = 0; r < p_; ++r) {
        if (r != me_) c_.writePeer(r, c_.peerDescriptor(r).recvAddr + split, send_ + split, bytes_ - split);
      }
      if (recv_ != nullptr && recv_ != send_) std::memcpy(recv_, send_, bytes_);
    }
    finishDirect();
  }

  void reduce() {
    NodeDescriptor d = describe(op_);
    int root = op_.root;
    if (bytes_ <= c_.stageLimit(op_.coll)) {
      useInline(bytes_);
      std::memcpy(myInput(), send_, bytes_);
      c_.publish(&d);
      if (me_ != root) return;  // the next collective's first step waits until the root is done with it
      c_.waitAll();
      reduceStaged(recv_, 0, op_.count);
      return;
    }
    c_.publish(&d);
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

  void barrier() {
    NodeDescriptor d = describe(op_);
    c_.publish(&d);
    c_.waitAll();
  }

 private:
  // A collective of one step whose staged input (`stagedBytes` per rank) fits kInlineBytes carries it
  // next to its step; otherwise in the staging areas.
  static constexpr size_t kNoInline = ~size_t{0};
  void useInline(size_t stagedBytes) { inline_ = stagedBytes <= kInlineBytes; }
  unsigned char* myInput() const { return inline_ ? c_.nextInline() : c_.stageIn(me_); }
  const unsigned char* input(int r) const { return inline_ ? c_.peerInline(r) : c_.stageIn(r); }

  // dst = own op every peer's sendbuff[offset, offset + n), each peer's piece read into `piece` first.
  void reducePeers(unsigned char* dst, const unsigned char* own, size_t offset, size_t n, unsigned char* piece) {
    const unsigned char* left = own;
    for (int r = 0; r < p_; ++r) {
      if (r == me_) continue;
      c_.readPeer(r, piece, peerSend(r) + offset, n);
      c_.reduce(dst, left, piece, n / es_, op_.datatype, op_.op);
      left = dst;
    }
  }

  // The bytes of a direct Broadcast that the root writes into each non-root (from the end), decided alike on
  // every rank from the root's descriptor. With a CPU per rank the root would otherwise wait idle while the
  // p - 1 others each copy n: the root takes n / p of each when it has no copy of its own to make (in place,
  // or no output), half that when it also copies its input into its output. Measured at 2 ranks on 2 CPUs
  // (2-32 MiB): in place 2.1-2.7x faster than the non-root copying all; out of place 1.15-1.25x (with n / p
  // there, the root's own copy made it the slower side).
  size_t rootShare(const NodeDescriptor& rootDescriptor) const {
    if (!c_.cpuPerRank() || bytes_ < kShareFromBytes) return 0;
    bool rootCopies = rootDescriptor.recvAddr != 0 && rootDescriptor.recvAddr != rootDescriptor.sendAddr;
    size_t share = bytes_ / static_cast<size_t>(p_) / (rootCopies ? 2 : 1);
    return share / kPageBytes * kPageBytes;
  }

  // A direct Reduce's slice of rank r. Per byte of its slice every rank reads and reduces p - 1 inputs, and
  // a non-root also writes the result to the root. A write costing about half a read-and-reduce, the root's
  // slice is 1 + 1 / (2 (p - 1)) times the others' when every rank has a CPU (2 ranks on 2 CPUs, 512 KiB-
  // 32 MiB: 10-25 % faster than equal slices). With more ranks than CPUs only the total work counts: equal
  // slices, as every other collective's.
  Range reduceSliceOf(int r, int root) const {
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

  uint64_t peerSend(int r) const { return peerSends_ != nullptr ? peerSends_[r] : c_.peerDescriptor(r).sendAddr; }

  // Nobody returns (and lets its caller reuse the buffers) while a peer may still read or write them.
  void finishDirect() {
    c_.publish();
    c_.waitAll();
  }

  NodeComm& c_;
  const weftBackendOp_v1& op_;
  int p_;
  int me_;
  size_t es_;
  size_t bytes_;  // one rank's count in bytes (AllToAll, ReduceScatter: one block)
  const unsigned char* send_;
  unsigned char* recv_;
  bool inline_ = false;
  const uint64_t* peerSends_ = nullptr;  // per rank; null: the descriptors' sendAddr
};

// A list of buffers (weftBackendBuffer_v1) seen as one vector of bytes.
class BufferList {
 public:
  BufferList(const weftBackendBuffer_v1* buffers, size_t count, size_t elementBytes)
      : buffers_(buffers, buffers + count) {
    starts_.reserve(count + 1);
    size_t at = 0;
    for (const weftBackendBuffer_v1& b : buffers_) {
      starts_.push_back(at);
      at += b.count * elementBytes;
    }
    starts_.push_back(at);
  }
  size_t bytes() const { return starts_.back(); }

  // Calls f(send, receive, position in the range, length) for each buffer's part of bytes
  // [offset, offset + n).
  template <typename F>
  void forEach(size_t offset, size_t n, F f) const {
    size_t i = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin()) - 1;
    for (; i < buffers_.size() && starts_[i] < offset + n; ++i) {
      size_t begin = std::max(offset, starts_[i]);
      size_t end = std::min(offset + n, starts_[i + 1]);
      if (begin == end) continue;
      size_t skip = begin - starts_[i];
      f(static_cast<const unsigned char*>(buffers_[i].sendbuff) + skip,
        static_cast<unsigned char*>(buffers_[i].recvbuff) + skip, begin - offset, end - begin);
    }
  }
  // The parts of the send (or receive) buffers as ranges for process_vm_readv/writev.
  void ranges(size_t offset, size_t n, bool recv, std::vector<iovec>& out) const {
    out.clear();
    forEach(offset, n, [&](const unsigned char* send, unsigned char* receive, size_t, size_t length) {
      out.push_back({recv ? receive : const_cast<unsigned char*>(send), length});  // only read when a send
    });
  }

 private:
  std::vector<weftBackendBuffer_v1> buffers_;
  std::vector<size_t> starts_;  // bytes before each buffer; the total last
};

// A peer's list, read from its memory (the address and length it published).
BufferList peerList(NodeComm& c, int peer, size_t elementBytes, size_t expectedBytes) {
  const NodeDescriptor& d = c.peerDescriptor(peer);
  constexpr uint64_t kMostBuffers = uint64_t{1} << 24;
  if (d.recvAddr > kMostBuffers) {
    throw NodeError{weftRemoteError, "rank " + std::to_string(peer) + " published a list of " +
                                         std::to_string(d.recvAddr) + " buffers"};
  }
  std::vector<weftBackendBuffer_v1> table(d.recvAddr);
  c.readPeer(peer, table.data(), d.sendAddr, table.size() * sizeof(weftBackendBuffer_v1));
  BufferList list(table.data(), table.size(), elementBytes);
  if (list.bytes() != expectedBytes) {
    throw NodeError{weftRemoteError, "rank " + std::to_string(peer) + "'s buffers hold " +
                                         std::to_string(list.bytes()) + " bytes, not " +
                                         std::to_string(expectedBytes)};
  }
  return list;
}

}  // namespace

void runNodeBatch(NodeComm& c, const weftBackendOp_v1& whole, const weftBackendOp_v1* ops, size_t numOps) {
  const size_t es = plugin::elementBytes(whole.datatype);
  const int p = c.nranks();
  const int me = c.rank();
  const auto ranks = static_cast<size_t>(p);
  // What one call stages: its input (ReduceScatter: all p blocks). Calls with nothing to move may have NULL
  // buffers: only the others are staged, end to end.
  const size_t stagedPerElement = whole.coll == weftCollReduceScatter ? es * ranks : es;
  auto forEachCall = [&](auto f) {
    size_t offset = 0;
    for (size_t i = 0; i < numOps; ++i) {
      if (ops[i].count == 0) continue;
      f(ops[i], offset, ops[i].count * es);
      offset += ops[i].count * stagedPerElement;
    }
  };
  forEachCall([&](const weftBackendOp_v1& op, size_t offset, size_t) {
    std::memcpy(c.stageIn(me) + offset, op.sendbuff, op.count * stagedPerElement);
  });
  NodeDescriptor d = describe(whole);
  c.publish(&d);
  c.waitAll();
  // Each call as alone (every element reduced in rank order, or its blocks copied): the result it gets alone.
  forEachCall([&](const weftBackendOp_v1& op, size_t offset, size_t bytes) {
    Runner run(c, op);
    auto* out = static_cast<unsigned char*>(op.recvbuff);
    switch (whole.coll) {
      case weftCollAllReduce:
        return run.reduceStaged(out, offset, op.count);
      case weftCollReduceScatter:
        return run.reduceStaged(out, offset + static_cast<size_t>(me) * bytes, op.count);
      default:  // AllGather
        return run.gatherStaged(offset);
    }
  });
}

void runNodeDirectBatch(NodeComm& c, const weftBackendOp_v1& whole, const weftBackendOp_v1* ops, size_t numOps) {
  const int p = c.nranks();
  const auto ranks = static_cast<size_t>(p);
  NodeComm::BatchTables& t = c.batchTables();
  t.mine.clear();
  for (size_t i = 0; i < numOps; ++i) t.mine.push_back({ops[i].sendbuff, ops[i].recvbuff, ops[i].count});
  NodeDescriptor d = describe(whole);
  d.sendAddr = reinterpret_cast<uint64_t>(t.mine.data());
  d.recvAddr = numOps;
  c.publish(&d);
  c.waitAll();
  // sends[i * p + r]: where rank r's input to call i lies.
  t.sends.assign(numOps * ranks, 0);
  for (int r = 0; r < p; ++r) {
    const bool me = r == c.rank();
    if (!me) {
      const NodeDescriptor& theirs = c.peerDescriptor(r);
      if (theirs.recvAddr != numOps) {
        throw NodeError{weftInvalidUsage, "mismatched collectives: rank " + std::to_string(r) + " ran " +
                                              std::to_string(theirs.recvAddr) + " " + nodeCollName(whole.coll) +
                                              "s together where rank " + std::to_string(c.rank()) + " ran " +
                                              std::to_string(numOps)};
      }
      t.theirs.resize(numOps);
      c.readPeer(r, t.theirs.data(), theirs.sendAddr, numOps * sizeof(weftBackendBuffer_v1));
    }
    for (size_t i = 0; i < numOps; ++i) {
      const weftBackendBuffer_v1& call = me ? t.mine[i] : t.theirs[i];
      if (call.count != ops[i].count) {
        throw NodeError{weftInvalidUsage,
                        "mismatched collectives: rank " + std::to_string(r) + "'s " + nodeCollName(whole.coll) +
                            " " + std::to_string(i) + " of a run has count " + std::to_string(call.count) +
                            " where rank " + std::to_string(c.rank()) + "'s has " + std::to_string(ops[i].count)};
      }
      t.sends[i * ranks + static_cast<size_t>(r)] = reinterpret_cast<uint64_t>(call.sendbuff);
    }
  }
  for (size_t i = 0; i < numOps; ++i) {
    Runner run(c, ops[i]);
    run.setPeerSends(&t.sends[i * ranks]);
    if (whole.coll == weftCollAllGather) {
      run.allGatherDirect();
    } else {
      run.reduceScatterDirect();
    }
  }
  c.publish();  // nobody returns while a peer may still read its buffers or its table
  c.waitAll();
}

// The direct AllReduce (see Runner::allReduce) on lists of buffers: the peers' lists are read once, then
// every read and write of a chunk is one process_vm_readv/writev over the buffers it spans, and the
// reduction goes straight into this rank's receive buffers, as on one vector.
void runNodeAllReduceList(NodeComm& c, const weftBackendOp_v1& op, const weftBackendBuffer_v1* buffers,
                          size_t numBuffers) {
  const size_t es = plugin::elementBytes(op.datatype);
  const int p = c.nranks();
  const int me = c.rank();
  const BufferList mine(buffers, numBuffers, es);
  if (mine.bytes() != op.count * es) {
    throw NodeError{weftInvalidArgument, "the buffers hold " + std::to_string(mine.bytes()) +
                                             " bytes, not count " + std::to_string(op.count) + " elements"};
  }
  NodeDescriptor d = describe(op);
  d.sendAddr = reinterpret_cast<uint64_t>(buffers);
  d.recvAddr = numBuffers;
  c.publish(&d);
  c.waitAll();
  std::vector<BufferList> theirs;
  theirs.reserve(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) theirs.push_back(r == me ? mine : peerList(c, r, es, mine.bytes()));
  const Range s = sliceOf(op.count, es, me, p);
  unsigned char* piece = c.scratch(kChunkBytes);
  std::vector<iovec> local;
  std::vector<iovec> remote;
  for (size_t off = s.begin; off < s.end; off += kChunkBytes) {
    const size_t n = std::min(kChunkBytes, s.end - off);
    const std::vector<iovec> pieceRange{{piece, n}};
    // own input op each peer's, in rank order (as Runner::reducePeers), into the receive buffers.
    bool first = true;
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      theirs[r].ranges(off, n, false, remote);
      c.readPeerList(r, pieceRange, remote);
      mine.forEach(off, n, [&](const unsigned char* send, unsigned char* recv, size_t at, size_t length) {
        c.reduce(recv, first ? send : recv, piece + at, length / es, op.datatype, op.op);
      });
      first = false;
    }
    mine.ranges(off, n, true, local);
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      theirs[r].ranges(off, n, true, remote);
      c.writePeerList(r, remote, local);
    }
  }
  c.publish();  // nobody returns while a peer may still read or write its buffers
  c.waitAll();
}

void runNodeCollective(NodeComm& comm, const weftBackendOp_v1& op) {
  Runner run(comm, op);
  // Nothing to move (its buffers may be NULL): one step still checks that every rank called the same.
  if (op.count == 0) return run.barrier();
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
