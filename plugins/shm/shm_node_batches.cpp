// The node backend's runs of several collectives in one: runNodeBatch (staged calls, all in one step),
// runNodeDirectBatch (direct AllGathers or ReduceScatters between one first step and one last) and
// runNodeAllReduceList (a direct AllReduce on lists of buffers). They reuse Runner's parts
// (shm_node_runner.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/copy_bytes.h"
#include "shm_node.h"
#include "shm_node_runner.h"

namespace weft::shm {
namespace {

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

// Where bytes [at, at + length) of a vector cut into `ranges` (in order, from 0) lie: f(offset in the
// stretch, pointer, bytes) for each piece. Calls must come with increasing `at`: the cursor only moves on.
struct RangeCursor {
  size_t index = 0;
  size_t start = 0;  // where ranges[index] begins
};
template <typename F>
void forEachPiece(const std::vector<iovec>& ranges, RangeCursor& cursor, size_t at, size_t length, F f) {
  for (size_t done = 0; done < length;) {
    while (cursor.start + ranges[cursor.index].iov_len <= at + done)
      cursor.start += ranges[cursor.index++].iov_len;
    const size_t inside = at + done - cursor.start;
    const size_t n = std::min(length - done, ranges[cursor.index].iov_len - inside);
    f(done, static_cast<const unsigned char*>(ranges[cursor.index].iov_base) + inside, n);
    done += n;
  }
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
  c.stage(whole.count * stagedPerElement, 0);  // whole.count: the calls' counts summed
  forEachCall([&](const weftBackendOp_v1& op, size_t offset, size_t) {
    copyBytes(c.stageIn(me) + offset, op.sendbuff, op.count * stagedPerElement);
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
  for (size_t i = 0; i < numOps; ++i) {
    t.mine.push_back({ops[i].sendbuff, ops[i].recvbuff, ops[i].count});
    c.shareBuffers(ops[i]);
  }
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
  c.shareList(buffers, numBuffers, es);
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
  std::vector<iovec> mapped;
  for (size_t off = s.begin; off < s.end; off += kChunkBytes) {
    const size_t n = std::min(kChunkBytes, s.end - off);
    const std::vector<iovec> pieceRange{{piece, n}};
    // own input op each peer's, in rank order (as Runner::reducePeers), into the receive buffers; a peer's
    // mapped weftMemAlloc buffers are reduced where they lie, others read into `piece` first.
    bool first = true;
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      theirs[r].ranges(off, n, false, remote);
      const std::vector<iovec>* input = &mapped;
      if (!c.mapPeerRanges(r, remote, &mapped)) {
        c.readPeerList(r, pieceRange, remote);
        input = &pieceRange;
      }
      RangeCursor cursor;
      mine.forEach(off, n, [&](const unsigned char* send, unsigned char* recv, size_t at, size_t length) {
        forEachPiece(*input, cursor, at, length, [&](size_t skip, const unsigned char* theirsAt, size_t bytes) {
          c.reduce(recv + skip, (first ? send : recv) + skip, theirsAt, bytes / es, op.datatype, op.op);
        });
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

}  // namespace weft::shm
