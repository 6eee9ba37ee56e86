// Pipelining for large messages: segment size, receive windows and outstanding sends.
//
// Progress and flow control. A Channel may move bytes only while waitAll watches their request (the
// communicator's Channel starts transfers and the TCP transport pushes bytes only there), and a send may
// complete only once the receiver has posted its receive (a transport may buffer nothing). So:
//   - no send is left unwatched while this rank blocks: every wait for a receive also waits for the sends
//     outstanding (SendQueue::waitWith);
//   - a pipeline never has more sends outstanding to a peer than that peer has receives posted for it: a
//     rank posts its receives kSegmentsInFlight ahead, and a ring moves at most that many segments per
//     block in one round, so the segments it sends at the start of a round fit the receiver's window and
//     each later send is matched by a receive posted at the same point.
// Under those two rules the rank that is furthest behind can always progress, so nothing deadlocks.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <numeric>
#include <span>

#include "core/algorithms/channel.h"
#include "core/algorithms/partition.h"
#include "core/algorithms/small_vector.h"

namespace weft {

// Pipelined algorithms move a large vector as segments of at most this many bytes, so that reducing (or
// forwarding) one segment overlaps the transfer of the next. 128 KiB: measured over TCP on the loopback
// (np 2 AllReduce, against Open MPI's tcp BTL), 1 MiB segments left 1-2 MiB vectors without overlap (0.8x
// of Open MPI's speed) and large ones at 1.2-1.7x; 128 KiB gives 1.1-1.6x and 2-2.7x. Process-wide; tests lower it
// to run the pipelines through many segments on small inputs.
inline std::atomic<size_t> gPipelineSegmentBytes{size_t{128} << 10};

// Receives a pipeline posts ahead of the segment it is working on.
inline constexpr size_t kSegmentsInFlight = 4;

// Elements per segment for `elemSize`-byte elements (at least one).
inline size_t segmentElements(size_t elemSize) {
  size_t elements = gPipelineSegmentBytes.load(std::memory_order_relaxed) / elemSize;
  return elements > 0 ? elements : 1;
}
inline size_t segmentBytes(size_t elemSize) { return segmentElements(elemSize) * elemSize; }

// A receive that may not have been posted: empty messages are skipped on both ends (each computes the
// same size), so a Channel never sees one.
struct PendingRecv {
  Request request;
  bool posted = false;

  void post(Channel& channel, int peer, void* data, size_t bytes) {
    posted = bytes != 0;
    if (posted) request = channel.irecv(peer, data, bytes);
  }
  // The same as one vectored message of `bytes` in all.
  void post(Channel& channel, int peer, std::span<const BufferPiece> pieces, size_t bytes) {
    posted = bytes != 0;
    if (!posted) return;
    request = pieces.size() == 1 ? channel.irecv(peer, pieces[0].data, bytes) : channel.irecvv(peer, pieces);
  }
};

// The sends a rank has outstanding, waited for together with its receives (see the top of this file).
class SendQueue {
 public:
  explicit SendQueue(Channel& channel) : channel_(channel) {}
  SendQueue(const SendQueue&) = delete;
  SendQueue& operator=(const SendQueue&) = delete;

  void post(int peer, const void* data, size_t bytes) {
    if (bytes != 0) requests_.push_back(channel_.isend(peer, data, bytes));
  }
  void post(int peer, std::span<const BufferPiece> pieces, size_t bytes) {
    if (bytes == 0) return;
    requests_.push_back(pieces.size() == 1 ? channel_.isend(peer, pieces[0].data, bytes)
                                           : channel_.isendv(peer, pieces));
  }

  // Waits for `recv` and every outstanding send.
  void waitWith(PendingRecv& recv) {
    if (recv.posted) requests_.push_back(recv.request);
    recv.posted = false;
    completeAll();
  }

  void completeAll() {
    if (!requests_.empty()) channel_.waitAll(requests_.span());
    requests_.clear();
  }

 private:
  Channel& channel_;
  // A ring has at most kSegmentsInFlight sends and a receive outstanding; a tree's node one per child and
  // segment in flight: 16 cover them without allocating.
  SmallVector<Request, 16> requests_;
};

// Sends one message and receives another at the same time; an empty side is skipped (its peer computes
// the same size and skips it too).
inline void exchange(Channel& channel, int sendPeer, const void* sendData, size_t sendBytes, int recvPeer,
                     void* recvData, size_t recvBytes) {
  Request requests[2];
  size_t n = 0;
  // The send first: a transport may start it at once (tcp does), and looking for the peer's message before
  // ours is on its way only delays both (measured: ~0.5 us of an 8-byte exchange over TCP).
  if (sendBytes != 0) requests[n++] = channel.isend(sendPeer, sendData, sendBytes);
  if (recvBytes != 0) requests[n++] = channel.irecv(recvPeer, recvData, recvBytes);
  if (n != 0) channel.waitAll({requests, n});
}

// How exchangeInSegments cuts a message of `bytes`: whole where the channel says segments do not pay
// (Channel::cutsLargeMessages) or where the receive window holds it at once, since segments would then add
// round trips and keep nothing more in cache (np 2 over tcp, 1 MiB AllReduces: 5-10 % slower in four
// segments); else in segments of segmentBytes(elemSize). The size and the transport decide, so a send and its
// receive are cut alike.
inline size_t exchangeSegmentBytes(size_t bytes, size_t elemSize, bool cut) {
  const size_t windowBytes = kSegmentsInFlight * segmentBytes(elemSize);
  if (!cut) return std::max(bytes, windowBytes);
  return bytes <= windowBytes ? windowBytes : segmentBytes(elemSize);
}

// The pieces of a message, at most two (a run of blocks that wraps round the buffer once).
using MessagePieces = std::array<BufferPiece, 2>;

// Bytes [offset, offset + bytes) of the concatenation of `pieces`, as pieces in `out`.
inline std::span<const BufferPiece> slicePieces(std::span<const BufferPiece> pieces, size_t offset, size_t bytes,
                                                MessagePieces& out) {
  size_t n = 0;
  for (const BufferPiece& piece : pieces) {
    if (bytes == 0) break;
    if (offset >= piece.bytes) {
      offset -= piece.bytes;
      continue;
    }
    const size_t take = std::min(piece.bytes - offset, bytes);
    out[n++] = {static_cast<char*>(piece.data) + offset, take};
    offset = 0;
    bytes -= take;
  }
  return {out.data(), n};
}

// Sends one large message and receives another at the same time, as exchange() does, but each cut as
// exchangeSegmentBytes says, so that each received segment can be used while it is still in cache and the next
// ones travel (without it a 4 MiB half went through the socket buffers whole and was read back from memory:
// np 2 AllReduce over tcp, 2-vCPU Xeon, Rabenseifner 1.6-1.7x slower than the segmented ring from 4 MiB).
// Received segment i, bytes [offset, offset + bytes) of the message, lands in the pieces
// landing(i, offset, bytes, out) returns (built in `out`, or any that live as long), then arrived(i, offset,
// bytes) runs; after it returns, segment i + kSegmentsInFlight may land in the same place. Flow control as at
// the top of this file: every wait for a segment also waits for the sends outstanding, and the sends run at
// most kSegmentsInFlight ahead of the segments consumed, which is the window the receiver posts.
template <typename Landing, typename Arrived>
void exchangeInSegments(Channel& channel, int sendPeer, std::span<const BufferPiece> send, int recvPeer,
                        size_t recvBytes, size_t elemSize, Landing landing, Arrived arrived) {
  const size_t sendBytes = std::accumulate(send.begin(), send.end(), size_t{0},
                                           [](size_t sum, const BufferPiece& piece) { return sum + piece.bytes; });
  const size_t sendCut = exchangeSegmentBytes(sendBytes, elemSize, channel.cutsLargeMessages(sendPeer));
  const size_t recvCut = exchangeSegmentBytes(recvBytes, elemSize, channel.cutsLargeMessages(recvPeer));
  const size_t sendSegments = ceilDiv(sendBytes, sendCut);
  const size_t recvSegments = ceilDiv(recvBytes, recvCut);
  std::array<PendingRecv, kSegmentsInFlight> window{};
  SendQueue sends(channel);
  auto postRecv = [&](size_t i) {
    if (i >= recvSegments) return;
    const size_t offset = i * recvCut;
    const size_t bytes = std::min(recvCut, recvBytes - offset);
    MessagePieces out{};
    window[i % kSegmentsInFlight].post(channel, recvPeer, landing(i, offset, bytes, out), bytes);
  };
  auto postSend = [&](size_t i) {
    if (i >= sendSegments) return;
    const size_t offset = i * sendCut;
    const size_t bytes = std::min(sendCut, sendBytes - offset);
    MessagePieces out{};
    sends.post(sendPeer, slicePieces(send, offset, bytes, out), bytes);
  };
  // The send first, as in exchange().
  for (size_t i = 0; i < kSegmentsInFlight; ++i) postSend(i);
  for (size_t i = 0; i < kSegmentsInFlight; ++i) postRecv(i);
  for (size_t i = 0; i < std::max(sendSegments, recvSegments); ++i) {
    if (i < recvSegments) {
      sends.waitWith(window[i % kSegmentsInFlight]);
      arrived(i, i * recvCut, std::min(recvCut, recvBytes - i * recvCut));
    } else {
      sends.completeAll();
    }
    postRecv(i + kSegmentsInFlight);
    postSend(i + kSegmentsInFlight);
  }
  sends.completeAll();
}

// An Arrived for exchangeInSegments when the received bytes are where they belong and need nothing more.
inline constexpr auto kNothingOnArrival = [](size_t, size_t, size_t) {};

// A Landing for exchangeInSegments: each segment at its offset in `pieces` (which must outlive the exchange).
inline auto landInPieces(std::span<const BufferPiece> pieces) {
  return [pieces](size_t, size_t offset, size_t bytes, MessagePieces& out) {
    return slicePieces(pieces, offset, bytes, out);
  };
}

// The same between two contiguous buffers with one partner, the received bytes landing where they belong.
inline void exchangeInSegments(Channel& channel, int partner, const void* sendData, size_t sendBytes,
                               void* recvData, size_t recvBytes, size_t elemSize) {
  const BufferPiece outgoing{const_cast<void*>(sendData), sendBytes};  // only read
  const BufferPiece incoming{recvData, recvBytes};
  exchangeInSegments(channel, partner, {&outgoing, 1}, partner, recvBytes, elemSize, landInPieces({&incoming, 1}),
                     kNothingOnArrival);
}

}  // namespace weft
