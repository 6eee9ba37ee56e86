// What an algorithm sees of a communicator: its rank, its size, and ordered non-blocking point-to-point
// messages. Algorithms emit sends, receives and local reductions over a Channel; the communicator's
// implementation moves the bytes over transport plugins, and tests can substitute an in-memory one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace weft {

// A pending transfer. What the handle points at belongs to the Channel that made it (which keeps the peer,
// size and direction there). One pointer, so that it comes back from isend/irecv in a register: a larger
// struct goes through the stack, and reading it back waited for every older store to land, the ring's
// included (a tenth of a small Send/Recv's time).
struct Request {
  void* handle = nullptr;
};

// One buffer of a vectored message (Channel::isendv/irecvv).
struct BufferPiece {
  void* data;
  size_t bytes;
};

class Channel {
 public:
  virtual ~Channel() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Messages between two ranks arrive in the order they were sent; a receive matches the oldest
  // unmatched send from that peer. A receive must name exactly the size of the matching send.
  virtual Request isend(int peer, const void* data, size_t bytes) = 0;
  virtual Request irecv(int peer, void* data, size_t bytes) = 0;

  // A message gathered from (isendv) or scattered into (irecvv) several buffers in order: the same message as
  // one of their concatenation, so it matches a plain irecv or isend of the total size on the other side.
  // The list need not outlive the call; the buffers must, as for isend and irecv.
  virtual Request isendv(int peer, std::span<const BufferPiece> pieces) = 0;
  virtual Request irecvv(int peer, std::span<const BufferPiece> pieces) = 0;

  // Waits until every request is complete. Throws weft::Error on failure (timeout, dead peer, a message
  // of the wrong size). Requests are consumed.
  virtual void waitAll(std::span<Request> requests) = 0;

  // Scratch memory for the duration of one collective: slot 0 and 1 are independent buffers; a call
  // may return a new pointer, invalidating the previous one of that slot.
  virtual void* scratch(int slot, size_t bytes) = 0;

  // Whether a large message to or from `peer` is better cut into segments (exchangeInSegments, pipeline.h).
  // Yes where the transport lets a whole message pile up in a buffer it does not bound, as tcp's socket
  // buffers do; no where it copies a message once or pipelines it through its own ring (shm: segments made
  // Rabenseifner 1.5x slower at 2 ranks and 4 MiB), nor between ranks of a host that outnumber its CPUs (a
  // segment waits for its receiver to be scheduled). The same on both ends.
  virtual bool cutsLargeMessages(int peer) const {
    (void)peer;
    return true;
  }

  // Whether some pair of ranks talks through a transport that moves a large message with one copy (shm's
  // CMA) rather than streaming it through socket buffers; alike on every rank, so that pipelines whose every
  // link must cut alike (the binomial trees) can size their segments by it.
  virtual bool copiesLargeMessagesOnce() const { return false; }

  // Conveniences built on the calls above.
  void send(int peer, const void* data, size_t bytes) {
    Request r = isend(peer, data, bytes);
    waitAll({&r, 1});
  }
  void recv(int peer, void* data, size_t bytes) {
    Request r = irecv(peer, data, bytes);
    waitAll({&r, 1});
  }
  void sendRecv(int sendPeer, const void* sendData, size_t sendBytes, int recvPeer, void* recvData,
                size_t recvBytes) {
    Request r[2] = {irecv(recvPeer, recvData, recvBytes), isend(sendPeer, sendData, sendBytes)};
    waitAll(r);
  }
};

}  // namespace weft
