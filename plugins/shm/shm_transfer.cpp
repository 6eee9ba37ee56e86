// Moving bytes: the send and receive progress of a connection's queue through the ring, and CMA reads.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "shm_cma.h"
#include "shm_conn.h"
#include "shm_socket.h"

namespace weft::shm {

// ---- send side ----

void Connection::refreshTail() {
  uint64_t tail = ring_.header()->tail.load(std::memory_order_acquire);
  seenTail_.store(tail, std::memory_order_relaxed);
  // The receiver can only consume what we wrote (it finds a slot by its stamp before we publish head);
  // anything else is a corrupt (or hostile) segment.
  if (tail < tailSeen_ || tail > ringHead_) {
    fail(weftRemoteError, "the ring is corrupt (tail %llu outside [%llu, %llu])",
         static_cast<unsigned long long>(tail), static_cast<unsigned long long>(tailSeen_),
         static_cast<unsigned long long>(ringHead_));
    return;
  }
  tailSeen_ = tail;
}

void Connection::publishHead() {
  if (ringHead_ == published_) return;
  ring_.header()->head.store(ringHead_, std::memory_order_release);
  published_ = ringHead_;
  if (replied_) {
    ringDoorbell(peerDoorbell_);
  } else {
    // Not knowing the receiver's doorbell yet, look for it once more: it is sent before the receiver can
    // sleep on this connection, so either it is here now, or the receiver will see this head before sleeping.
    readReply();
  }
}

bool Connection::progressSend() {
  if (requests_.head() == nullptr) {
    noteWaiting(0);
    return false;
  }
  if (!replied_) readReply();
  if (error_ != weftSuccess) return true;
  bool moved = writeRecords();
  if (error_ != weftSuccess) return true;
  publishHead();
  if (error_ != weftSuccess) return true;
  moved = completeSends() || moved;
  if (error_ != weftSuccess) return true;
  uint8_t mask = 0;
  // The request at the cursor waits for ring space, unless it is a large one waiting for the reply (which
  // comes by the socket, and rings our doorbell).
  if (cursor_ != nullptr && (cursor_->started || replied_ || cursor_->length <= kInlineMaxBytes))
    mask |= kWaitSpace;
  if (const Request* oldest = requests_.head(); oldest != nullptr && oldest->cma) mask |= kWaitCma;
  noteWaiting(mask);
  return moved;
}

bool Connection::writeRecords() {
  bool moved = false;
  const uint64_t capacity = ring_.capacity();
  while (cursor_ != nullptr) {
    Request* r = cursor_;
    if (!r->started) {
      // Until the reply says whether the receiver reads by CMA, a large message cannot be framed. It could not
      // complete before the receiver accepts anyway; small messages meanwhile fill the ring, as with TCP.
      if (r->length > kInlineMaxBytes && !replied_) break;
      r->cma = r->length > kInlineMaxBytes && cma_ && (r->pieces == nullptr || r->count <= int{kMaxCmaPieces});
      uint64_t slot = alignUp(ringHead_, kSlotBytes);
      const bool inSlot = payloadInSlot(r->cma, r->length);
      // A small message goes in one piece when it fits, so that the receiver sees it whole in one look.
      uint64_t want = slot + kSlotBytes + (r->cma || inSlot || r->length > kInlineMaxBytes ? 0 : r->length);
      if (want - tailSeen_ > capacity) {
        refreshTail();
        if (error_ != weftSuccess) return true;
        if (slot + kSlotBytes - tailSeen_ > capacity) break;
      }
      MessageHeader h{};
      h.magic = kMessageMagic;
      h.kind = static_cast<uint16_t>(!r->cma                ? MessageKind::Inline
                                     : r->pieces != nullptr ? MessageKind::CmaList
                                                            : MessageKind::Cma);
      h.tag = r->tag;
      h.length = r->length;
      if (r->cma) {
        // The pieces stay where they are: the receiver reads the caller's list of them, which, like them,
        // stays valid until the send is reported done (after the receiver's read).
        h.address =
            r->pieces != nullptr ? reinterpret_cast<uint64_t>(r->pieces) : reinterpret_cast<uint64_t>(r->data);
        h.pieces = r->pieces != nullptr ? static_cast<uint32_t>(r->count) : 0;
        h.cmaSeq = r->cmaSeq = ++cmaCount_;
      }
      if (inSlot && r->length > 0) copyPayload(r, slot + kSlotPayloadOffset, r->length);
      std::memcpy(ring_.at(slot), &h, offsetof(MessageHeader, stamp));
      ring_.stampSlot(slot);
      ringHead_ = slot + kSlotBytes;
      r->started = true;
      moved = true;
    }
    while (!r->cma && r->payloadDone < r->length) {
      uint64_t room = capacity - (ringHead_ - tailSeen_);
      if (room == 0) {
        publishHead();  // let the receiver drain what is there while we wait
        if (error_ == weftSuccess) refreshTail();
        if (error_ != weftSuccess) return true;
        room = capacity - (ringHead_ - tailSeen_);
        if (room == 0) return moved;
      }
      size_t n = static_cast<size_t>(std::min<uint64_t>({room, r->length - r->payloadDone, publishStep_}));
      copyPayload(r, ringHead_, n);
      ringHead_ += n;
      moved = true;
      if (ringHead_ - published_ >= publishStep_) {
        publishHead();
        if (error_ != weftSuccess) return true;
      }
    }
    cursor_ = r->next;
  }
  return moved;
}

bool Connection::completeSends() {
  bool moved = false;
  if (cmaDoneSeen_ < cmaCount_) {
    uint64_t done = ring_.header()->cmaDone.load(std::memory_order_acquire);
    seenCmaDone_.store(done, std::memory_order_relaxed);
    if (done < cmaDoneSeen_ || done > cmaCount_) {
      fail(weftRemoteError, "the ring is corrupt (%llu CMA reads done of %llu sent)",
           static_cast<unsigned long long>(done), static_cast<unsigned long long>(cmaCount_));
      return true;
    }
    cmaDoneSeen_ = done;
  }
  // In post order: a message written into the ring is done (its buffer may be reused), a CMA message when
  // the receiver has read it; neither is reported before the ones posted ahead of it.
  for (Request* r = requests_.head(); r != nullptr && r != cursor_ && (!r->cma || r->cmaSeq <= cmaDoneSeen_);
       r = requests_.head()) {
    requests_.complete(r);
    moved = true;
  }
  return moved;
}

// ---- receive side ----

void Connection::refreshHead() {
  uint64_t head = ring_.header()->head.load(std::memory_order_acquire);
  seenHead_.store(head, std::memory_order_relaxed);
  // Head may trail our tail: we take a slot by its stamp, which the sender writes before it publishes head.
  if (head < headSeen_ || (head > ringTail_ && head - ringTail_ > ring_.capacity())) {
    fail(weftRemoteError, "the ring is corrupt (head %llu, tail %llu, capacity %llu)",
         static_cast<unsigned long long>(head), static_cast<unsigned long long>(ringTail_),
         static_cast<unsigned long long>(ring_.capacity()));
    return;
  }
  headSeen_ = head;
}

void Connection::publishTail() {
  if (ringTail_ == published_) return;
  ring_.header()->tail.store(ringTail_, std::memory_order_release);
  published_ = ringTail_;
  ringDoorbell(peerDoorbell_);
}

bool Connection::progressRecv() {
  bool moved = false;
  uint8_t mask = 0;
  while (requests_.head() != nullptr) {
    Request* r = requests_.head();
    if (!r->started) {
      if (!readHeader(r)) {
        if (error_ == weftSuccess) mask = kWaitData;
        break;
      }
      moved = true;
      if (r->cma) {
        if (!readCma(r)) break;
        requests_.complete(r);
        continue;
      }
    }
    while (r->payloadDone < r->length) {
      auto readyBytes = [&] { return headSeen_ > ringTail_ ? headSeen_ - ringTail_ : 0; };
      uint64_t ready = readyBytes();
      if (ready == 0) {
        refreshHead();
        if (error_ != weftSuccess) break;
        ready = readyBytes();
        if (ready == 0) break;
      }
      size_t n = static_cast<size_t>(std::min<uint64_t>({ready, r->length - r->payloadDone, publishStep_}));
      copyPayload(r, ringTail_, n);
      ringTail_ += n;
      moved = true;
      if (ringTail_ - published_ >= publishStep_) publishTail();
    }
    if (error_ != weftSuccess) break;
    if (r->payloadDone < r->length) {
      mask = kWaitData;
      break;
    }
    requests_.complete(r);
  }
  if (error_ != weftSuccess) return true;
  publishTail();
  noteWaiting(mask);
  return moved;
}

bool Connection::readHeader(Request* r) {
  uint64_t slot = alignUp(ringTail_, kSlotBytes);
  if (!ring_.stamped(slot)) {
    // Not there yet. Head too, so that a waiting owner's mayProgress compares against what we saw.
    refreshHead();
    if (error_ != weftSuccess) return false;
    if (!ring_.stamped(slot)) {
      if (headSeen_ >= slot + kSlotBytes) {
        fail(weftRemoteError, "no message in the slot at %llu below head %llu: the ring is corrupt",
             static_cast<unsigned long long>(slot), static_cast<unsigned long long>(headSeen_));
      }
      return false;
    }
  }
  // A copy first: the checks must hold for what is used, whatever the other side writes meanwhile.
  MessageHeader h;
  std::memcpy(&h, ring_.at(slot), sizeof(h));
  const bool cmaList = h.kind == static_cast<uint16_t>(MessageKind::CmaList);
  if (h.magic != kMessageMagic || (h.kind != static_cast<uint16_t>(MessageKind::Inline) &&
                                   h.kind != static_cast<uint16_t>(MessageKind::Cma) && !cmaList)) {
    fail(weftRemoteError, "bad message header (magic 0x%08x, kind %u): the ring is corrupt", h.magic,
         unsigned{h.kind});
    return false;
  }
  if (cmaList && (h.pieces < 1 || h.pieces > kMaxCmaPieces)) {
    fail(weftRemoteError, "a CMA message of %u pieces (1 to %u): the ring is corrupt", h.pieces, kMaxCmaPieces);
    return false;
  }
  bool cma = h.kind != static_cast<uint16_t>(MessageKind::Inline);
  if (cma && (!cma_ || h.cmaSeq != cmaCount_ + 1)) {
    fail(weftRemoteError, "unexpected CMA message (sequence %llu after %llu, CMA %s): the ring is corrupt",
         static_cast<unsigned long long>(h.cmaSeq), static_cast<unsigned long long>(cmaCount_),
         cma_ ? "agreed" : "not agreed");
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
  ringTail_ = slot + kSlotBytes;
  r->started = true;
  r->length = static_cast<size_t>(h.length);
  r->cma = cma;
  r->remote = h.address;
  r->remotePieces = cmaList ? h.pieces : 0;
  if (payloadInSlot(cma, r->length) && r->length > 0) copyPayload(r, slot + kSlotPayloadOffset, r->length);
  return true;
}

int Connection::readCmaList(Request* r) {
  remoteIov_.clear();
  if (r->remotePieces == 0) {
    // An address in the sender's memory, never dereferenced here: only the kernel reads it.
    remoteIov_.push_back({reinterpret_cast<void*>(r->remote), r->length});  // NOLINT(performance-no-int-to-ptr)
  } else {
    // The sender's list, read as it is now (it may not change until we are done), then checked: whatever it
    // says, we read no more than the header's length, and the pieces must add up to exactly that.
    remoteList_.resize(r->remotePieces);
    if (int err =
            cmaRead(peerPid_, remoteList_.data(), r->remote, remoteList_.size() * sizeof(weftTransportIov_v1));
        err != 0)
      return err;
    size_t total = 0;
    bool fits = true;
    for (const weftTransportIov_v1& piece : remoteList_) {
      fits = piece.size <= r->length - total;
      if (!fits) break;
      total += piece.size;
      if (piece.size > 0) remoteIov_.push_back({piece.data, piece.size});
    }
    if (!fits || total != r->length) {
      if (processExited(pidfd_)) return ESRCH;  // its pid reused: what we read was another process's
      fail(weftRemoteError, "the sender's %u pieces do not add up to its %zu-byte message (tag %u)",
           r->remotePieces, r->length, r->tag);
      return 0;
    }
  }
  localIov_.clear();
  if (r->pieces == nullptr) {
    localIov_.push_back({r->data, r->length});
  } else {
    size_t left = r->length;
    for (int i = 0; i < r->count && left > 0; ++i) {
      const size_t n = std::min(left, r->pieces[i].size);
      if (n > 0) localIov_.push_back({r->pieces[i].data, n});
      left -= n;
    }
  }
  return cmaList(peerPid_, false, localIov_.data(), localIov_.size(), remoteIov_.data(), remoteIov_.size());
}

void Connection::copyPayload(Request* r, uint64_t pos, size_t n) {
  auto move = [&](unsigned char* user, size_t bytes) {
    if (isSend_) {
      ring_.copyIn(pos, user, bytes);
    } else {
      ring_.copyOut(pos, user, bytes);
    }
    pos += bytes;
    r->payloadDone += bytes;
  };
  if (r->pieces == nullptr) return move(r->data + r->payloadDone, n);
  // Payload bytes move in order: the cursor (piece, pieceOffset) follows payloadDone.
  while (n > 0) {
    const weftTransportIov_v1& piece = r->pieces[r->piece];
    const size_t take = std::min(n, piece.size - r->pieceOffset);
    if (take > 0) move(static_cast<unsigned char*>(piece.data) + r->pieceOffset, take);  // empty: maybe NULL
    n -= take;
    r->pieceOffset += take;
    if (r->pieceOffset == piece.size) {
      ++r->piece;
      r->pieceOffset = 0;
    }
  }
}

bool Connection::readCma(Request* r) {
  // A sender that closed the connection (or died) left this message unfinished: its buffer may already hold
  // something else. One poll per large message is cheap next to the copy.
  if (!peerGone_ && socketState(socket_.fd()) != SocketState::Quiet) peerGone_ = true;
  if (peerGone_) {
    fail(weftRemoteError, "the peer process (pid %d) closed the connection before its %zu-byte message was read",
         static_cast<int>(peerPid_), r->length);
    return false;
  }
  int err = r->pieces == nullptr && r->remotePieces == 0 ? cmaRead(peerPid_, r->data, r->remote, r->length)
                                                         : readCmaList(r);
  if (error_ != weftSuccess) return false;  // the sender's list did not match its header
  // A pid can be reused once its process is gone; the pidfd cannot. If the process is still there after the
  // read, it was the sender we read from.
  if (err == 0 && processExited(pidfd_)) err = ESRCH;
  if (err != 0) {
    fail(err == EPERM || err == ENOSYS ? weftSystemError : weftRemoteError,
         "reading the %zu-byte message (tag %u) from pid %d with process_vm_readv failed: %s", r->length, r->tag,
         static_cast<int>(peerPid_), std::strerror(err));
    return false;
  }
  ++cmaCount_;
  ring_.header()->cmaDone.store(cmaCount_, std::memory_order_release);
  publishTail();  // also rings the sender, who waits for cmaDone
  return true;
}

}  // namespace weft::shm
