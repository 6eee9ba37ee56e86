// Moving bytes: the send and receive progress of a connection's queue, straight from and to user buffers.
// A vectored message (isendv/irecvv) is one message on the wire, its payload gathered from or scattered
// into the pieces: a send or a large receive puts several pieces in one sendmsg/recvmsg, a small receive
// copies out of the bounce buffer piece by piece. A plain isend/irecv is a message of one piece.
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/copy_bytes.h"
#include "tcp_conn.h"
#include "tcp_socket.h"

namespace weft::tcp {

namespace {
// Iovecs of one sendmsg or recvmsg: headers and payload pieces of queued messages.
constexpr int kMaxIov = 64;
// Receives of up to this many bytes read header and payload together through the bounce buffer.
constexpr size_t kSmallReceive = 4096;
constexpr size_t kBounceBytes = 16384;
// Bytes one progress call sends at most before it returns, so that the caller's next look is at its receives.
// On loopback a sendmsg runs the receiving side's TCP input too and can go on for milliseconds while the peer
// reads; with both ranks sending large messages at once, each one's own socket meanwhile filled with up to the
// socket buffer (8 MiB) of the peer's data, read later from memory instead of cache. Measured (tcp, np 2,
// commperf sendrecv against Open MPI's MPI_Sendrecv in the same launch, 2-vCPU Zen 5, 2026-11-27, three
// alternating launches each): 8 MiB 0.79-0.82 -> 1.06-1.22, 32 MiB 0.67-0.73 -> 1.04-1.11 with 512 KiB.
constexpr size_t kMostBytesPerProgress = size_t{512} << 10;

// Fills up to max iovecs with r's payload from byte payloadDone to length, skipping empty pieces. Returns
// the iovecs used; *whole tells whether they hold all of it.
int fillPayloadIov(const Request& r, iovec* iov, int max, bool* whole) {
  size_t left = r.length - r.payloadDone;
  int piece = r.piece;
  size_t offset = r.pieceDone;
  int n = 0;
  while (left > 0 && n < max) {
    const weftTransportIov_v1& p = r.pieces[piece++];
    size_t take = std::min(p.size - offset, left);
    if (take > 0) {
      iov[n++] = {static_cast<unsigned char*>(p.data) + offset, take};
      left -= take;
    }
    offset = 0;
  }
  *whole = left == 0;
  return n;
}

// Shortens iov[0, n) to `most` bytes when it holds more than twice that; returns the iovecs left. Up to twice
// goes whole, so that a message a little larger than `most` (a segment and its header) is not split with its
// last bytes left for the next call.
int limitIov(iovec* iov, int n, size_t most) {
  size_t total = 0;
  for (int i = 0; i < n; ++i) total += iov[i].iov_len;
  if (total <= 2 * most) return n;
  for (int i = 0; i < n; ++i) {
    if (iov[i].iov_len >= most) {
      iov[i].iov_len = most;
      return i + 1;
    }
    most -= iov[i].iov_len;
  }
  return n;
}

// Counts bytes of r's payload as moved: payloadDone and its piece and offset.
void advancePayload(Request* r, size_t bytes) {
  r->payloadDone += bytes;
  while (bytes > 0) {
    size_t room = r->pieces[r->piece].size - r->pieceDone;
    if (bytes < room) {
      r->pieceDone += bytes;
      return;
    }
    bytes -= room;
    ++r->piece;
    r->pieceDone = 0;
  }
}

// Copies bytes (at most what r's payload still lacks) into r's pieces from byte payloadDone on.
void copyToPayload(Request* r, const unsigned char* from, size_t bytes) {
  r->payloadDone += bytes;
  while (bytes > 0) {
    const weftTransportIov_v1& p = r->pieces[r->piece];
    size_t room = p.size - r->pieceDone;
    size_t take = std::min(room, bytes);
    if (take > 0) copyBytes(static_cast<unsigned char*>(p.data) + r->pieceDone, from, take);
    from += take;
    bytes -= take;
    if (take < room) {
      r->pieceDone += take;
    } else {
      ++r->piece;
      r->pieceDone = 0;
    }
  }
}
}  // namespace

void Connection::progressSend() {
  size_t budget = kMostBytesPerProgress;
  while (requests_.head() != nullptr && budget > 0) {
    iovec iov[kMaxIov];
    int n = 0;
    // Stream order: a later message only after all of the earlier one.
    for (Request* r = requests_.head(); r != nullptr && n + 2 <= kMaxIov; r = r->next) {
      if (r->headerDone < kHeaderBytes) iov[n++] = {r->header + r->headerDone, kHeaderBytes - r->headerDone};
      bool whole = false;
      n += fillPayloadIov(*r, iov + n, kMaxIov - n, &whole);
      if (!whole) break;
    }
    n = limitIov(iov, n, budget);
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t sent = sendmsg(socket_.fd(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) break;
      fail(resultOfErrno(err), "send failed: %s", std::strerror(err));
      return;
    }
    size_t left = static_cast<size_t>(sent);
    budget -= std::min(budget, left);  // a queue of up to twice the budget went whole
    while (requests_.head() != nullptr) {
      Request* r = requests_.head();
      size_t h = std::min(left, kHeaderBytes - r->headerDone);
      r->headerDone += h;
      left -= h;
      size_t p = std::min(left, r->length - r->payloadDone);
      advancePayload(r, p);
      left -= p;
      if (r->headerDone < kHeaderBytes || r->payloadDone < r->length) break;
      requests_.complete(r);
    }
  }
  socket_.want(requests_.head() != nullptr ? POLLOUT : 0);
}

bool Connection::consumeBuffered(Request* r) {
  size_t avail = bounceEnd_ - bounceBegin_;
  const unsigned char* from = bounce_.data() + bounceBegin_;
  size_t take;
  if (r->headerDone < kHeaderBytes) {
    take = std::min(avail, kHeaderBytes - r->headerDone);
    std::memcpy(r->header + r->headerDone, from, take);
    r->headerDone += take;
    bounceBegin_ += take;
    return r->headerDone < kHeaderBytes || headerArrived(r);
  }
  take = std::min(avail, r->length - r->payloadDone);
  copyToPayload(r, from, take);
  bounceBegin_ += take;
  if (r->payloadDone == r->length) requests_.complete(r);
  return true;
}

bool Connection::drainBounce() {
  while (requests_.head() != nullptr && bounceBegin_ < bounceEnd_) {
    if (!consumeBuffered(requests_.head())) return false;
  }
  return true;
}

void Connection::progressRecv() {
  if (!drainBounce()) return;
  if (requests_.head() != nullptr && drained_) {
    pollfd p{socket_.fd(), POLLIN, 0};
    if (poll(&p, 1, 0) == 0) return;
    drained_ = false;
  }
  while (requests_.head() != nullptr) {
    Request* r = requests_.head();
    // A small message is read with whatever follows into the bounce buffer (one call). Otherwise the header
    // first (its length bounds what may be read), then the payload and the next header together.
    bool small = r->headerDone == 0 && r->size <= kSmallReceive;
    iovec iov[kMaxIov];
    int n = 0;
    if (small) {
      if (bounce_.empty()) bounce_.resize(kBounceBytes);
      iov[n++] = {bounce_.data(), bounce_.size()};
    } else if (r->headerDone < kHeaderBytes) {
      iov[n++] = {r->header + r->headerDone, kHeaderBytes - r->headerDone};
    } else {
      bool whole = false;
      n = fillPayloadIov(*r, iov, kMaxIov - 1, &whole);  // one left for the next header
      if (whole && r->next != nullptr) iov[n++] = {r->next->header, kHeaderBytes};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t got = recvmsg(socket_.fd(), &msg, MSG_DONTWAIT);
    if (got == 0) {
      fail(weftRemoteError, "connection closed by the peer%s",
           r->headerDone > 0 ? " in the middle of a message" : "");
      return;
    }
    if (got < 0) {
      int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        drained_ = true;
        break;
      }
      fail(resultOfErrno(err), "receive failed: %s", std::strerror(err));
      return;
    }
    if (small) {
      bounceBegin_ = 0;
      bounceEnd_ = static_cast<size_t>(got);
      if (!drainBounce()) return;
      continue;
    }
    size_t left = static_cast<size_t>(got);
    if (r->headerDone < kHeaderBytes) {
      r->headerDone += left;
      if (r->headerDone == kHeaderBytes && !headerArrived(r)) return;
      continue;
    }
    size_t p = std::min(left, r->length - r->payloadDone);
    advancePayload(r, p);
    left -= p;
    if (r->payloadDone < r->length) continue;
    Request* next = r->next;
    requests_.complete(r);
    if (left > 0) {
      next->headerDone = left;
      if (left == kHeaderBytes && !headerArrived(next)) return;
    }
  }
  socket_.want(requests_.head() != nullptr ? POLLIN : 0);
}

bool Connection::headerArrived(Request* r) {
  Header h = decodeHeader(r->header);
  if (h.magic != kMessageMagic) {
    fail(weftRemoteError, "bad message header (magic 0x%08x): the stream is corrupt", h.magic);
    return false;
  }
  if (h.tag != r->tag) {
    fail(weftRemoteError, "tag mismatch: message with tag %u for a receive with tag %u", h.tag, r->tag);
    return false;
  }
  if (h.length > r->size) {
    fail(weftRemoteError, "message of %llu bytes for a receive of %zu bytes (tag %u)",
         static_cast<unsigned long long>(h.length), r->size, r->tag);
    return false;
  }
  r->length = h.length;
  if (r->length == 0) requests_.complete(r);
  return true;
}

}  // namespace weft::tcp
