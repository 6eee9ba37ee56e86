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
    if (posted) request = channel.irecvv(peer, pieces);
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
    if (bytes != 0) requests_.push_back(channel_.isendv(peer, pieces));
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

// Exchanges two large messages with one partner, as exchange() does, but in segments of segmentBytes(elemSize)
// each way, so that each received segment can be used while it is still in cache and the next ones
// travel (without it a 4 MiB half went through the socket buffers whole and was read back from memory: np 2
// AllReduce over tcp, 2-vCPU Xeon, Rabenseifner 1.6-1.7x slower than the segmented ring from 4 MiB).
// Received segment i lands at landing(i) (room for kSegmentsInFlight * segmentBytes(elemSize) at landing(0), for
// a message that goes whole, and for segmentBytes(elemSize) at each later one) and then
// arrived(i, offset, bytes) runs, offset being the segment's first byte in the received message; after it
// returns, landing(i) may take segment i + kSegmentsInFlight. Both partners cut their messages alike, so a
// send of b bytes meets a receive of b bytes in the same segments. Flow control as at the top of this file:
// every wait for a segment also waits for the sends outstanding, and the sends run at most
// kSegmentsInFlight ahead of the segments consumed, which is the partner's window.
template <typename Landing, typename Arrived>
void exchangeInSegments(Channel& channel, int partner, const char* sendData, size_t sendBytes, size_t recvBytes,
                        size_t elemSize, Landing landing, Arrived arrived) {
  // A message the window holds at once goes whole: segments would add round trips and keep nothing more in
  // cache (np 2 over tcp, 1 MiB AllReduces: 5-10 % slower in four segments).
  const size_t windowBytes = kSegmentsInFlight * segmentBytes(elemSize);
  const size_t segment = std::max(sendBytes, recvBytes) <= windowBytes ? windowBytes : segmentBytes(elemSize);
  const size_t sendSegments = ceilDiv(sendBytes, segment);
  const size_t recvSegments = ceilDiv(recvBytes, segment);
  auto bytesOf = [&](size_t i, size_t total) { return std::min(segment, total - i * segment); };
  std::array<PendingRecv, kSegmentsInFlight> window{};
  SendQueue sends(channel);
  auto postRecv = [&](size_t i) {
    if (i < recvSegments) window[i % kSegmentsInFlight].post(channel, partner, landing(i), bytesOf(i, recvBytes));
  };
  auto postSend = [&](size_t i) {
    if (i < sendSegments) sends.post(partner, sendData + i * segment, bytesOf(i, sendBytes));
  };
  // The send first, as in exchange().
  for (size_t i = 0; i < kSegmentsInFlight; ++i) postSend(i);
  for (size_t i = 0; i < kSegmentsInFlight; ++i) postRecv(i);
  for (size_t i = 0; i < std::max(sendSegments, recvSegments); ++i) {
    if (i < recvSegments) {
      sends.waitWith(window[i % kSegmentsInFlight]);
      arrived(i, i * segment, bytesOf(i, recvBytes));
    } else {
      sends.completeAll();
    }
    postRecv(i + kSegmentsInFlight);
    postSend(i + kSegmentsInFlight);
  }
  sends.completeAll();
}

}  // namespace weft
