// The layout of a connection's segment and its single-producer single-consumer byte ring.
//
// One sender process writes, one receiver process reads. head (bytes published by the sender) and tail
// (bytes consumed by the receiver) only grow and each sits in its own cache line, so neither side's
// stores invalidate the line the other side polls. Every message starts with a header in a 64-byte slot at
// a slot-aligned position: a header never wraps and is read in one piece. An inline message's payload
// follows its header (up to kSlotPayloadBytes of it inside the slot); a CMA message is the header alone and
// its payload is read from the sender's memory, in one range (Cma) or, for a vectored send, in the pieces of
// a list the receiver reads there first (CmaList).
//
// The sender writes a header's stamp (slotStamp) last, before it publishes head, and the receiver looks for
// the next message at that stamp, not at head: a small message then costs the receiver the one line of its
// slot taken from the sender's cache, where reading head first, then the slot, then a payload line after it
// took three. Head still bounds what lies past a slot (longer payloads) and wakes a receiver that sleeps.
#ifndef WEFT_PLUGINS_SHM_RING_H
#define WEFT_PLUGINS_SHM_RING_H

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/copy_bytes.h"

namespace weft::shm {

inline constexpr size_t kCacheLine = 64;
inline constexpr size_t kSlotBytes = 64;
inline constexpr size_t kSegmentHeaderBytes = 4096;    // keeps the ring page aligned
inline constexpr uint32_t kSegmentMagic = 0x47534d57;  // "WMSG"
inline constexpr uint32_t kMessageMagic = 0x4d534d57;  // "WMSM"
// 2: CmaList messages (a vectored send's pieces, read by the receiver from the sender's list).
// 3: the slot's stamp, and payloads of up to kSlotPayloadBytes inside the slot.
inline constexpr uint16_t kSegmentVersion = 3;

inline constexpr size_t kMinRingBytes = size_t{64} << 10;
inline constexpr size_t kMaxRingBytes = size_t{1} << 30;
// 512 KiB: a ring is written round and round, and one that fits the caches with the messages' buffers keeps its
// lines there; messages above kInlineMaxBytes (64 KiB) go by CMA and take a slot only. Measured against the
// 4 MiB of before (2-vCPU Xeon, 2026-12-02, commperf loops, two launches each; perf/results/xeon/shm_ring_1202/):
// Send/Recv at 2 ranks 32 KiB 7.4-7.6 -> 5.0-5.2 us, 64 KiB 13.6-13.8 -> 8.1-8.4 (Open MPI 3.3-3.8, 4.2-4.9);
// node backend off, 4 ranks, AllGather and AllToAll 256 KiB 73-110 -> 34-48 us; 1-16 MiB within the noise,
// with CMA off too (everything through the ring; only a 256 KiB Broadcast at 2 ranks was slower, 17 -> 19 us);
// a communicator's first collective 2.8-3.3 -> 1.4-1.6 ms at 2 ranks (the rings are touched when made), and an
// eighth of the memory ((p - 1) rings per rank and communicator).
inline constexpr size_t kDefaultRingBytes = size_t{512} << 10;

struct SegmentHeader {
  uint32_t magic;  // written once by the creator, checked by the peer
  uint16_t version;
  uint16_t reserved;
  uint64_t ringBytes;
  uint64_t stampKey;                                  // random, written once by the creator: see slotStamp
  alignas(kCacheLine) std::atomic<uint64_t> head;     // written by the sender only
  alignas(kCacheLine) std::atomic<uint64_t> tail;     // written by the receiver only
  alignas(kCacheLine) std::atomic<uint64_t> cmaDone;  // CMA messages the receiver has read; receiver only
};
static_assert(sizeof(SegmentHeader) <= kSegmentHeaderBytes);
// The two processes share these atomics: they must be plain memory operations, not a lock table in one
// process's address space.
static_assert(std::atomic<uint64_t>::is_always_lock_free);

inline size_t segmentBytes(size_t ringBytes) { return kSegmentHeaderBytes + ringBytes; }

enum class MessageKind : uint16_t { Inline = 1, Cma = 2, CmaList = 3 };

// The most pieces a CmaList message may have: the receiver reads the list into memory of its own.
inline constexpr uint32_t kMaxCmaPieces = uint32_t{1} << 20;

// The header in a message's slot. Read by the receiver into a local copy before any check, so that what
// it checks is what it uses.
struct MessageHeader {
  uint32_t magic;
  uint16_t kind;
  uint16_t reserved;
  uint32_t tag;
  uint32_t pieces;   // CmaList: how many {data, size} pairs (weftTransportIov_v1) the list at `address` holds
  uint64_t length;   // payload bytes
  uint64_t address;  // Cma: the payload in the sender's address space; CmaList: the list of its pieces
  uint64_t cmaSeq;   // Cma, CmaList: 1 for the connection's first CMA message, then 2, ...
  uint64_t stamp;    // slotStamp(its slot's position), written last: the header and what the slot holds are there
};
// An inline payload this short lies in its slot, after the header (a slot holds no more than one message).
inline constexpr size_t kSlotPayloadOffset = sizeof(MessageHeader);
inline constexpr size_t kSlotPayloadBytes = kSlotBytes - kSlotPayloadOffset;
static_assert(kSlotPayloadOffset % 8 == 0 && kSlotPayloadBytes >= 8);
inline bool payloadInSlot(bool cma, uint64_t length) { return !cma && length <= kSlotPayloadBytes; }

// The stamp of the slot at stream position `slot`: its position plus one (never 0, a fresh ring's bytes, and
// never that of a slot a lap before), mixed with the connection's random key, so that stale payload bytes in
// the slot (any value a user sent a lap before) do not pass for it but once in 2^64.
inline uint64_t slotStamp(uint64_t slot, uint64_t key) { return (slot + 1) ^ key; }

inline uint64_t alignUp(uint64_t v, uint64_t to) { return (v + to - 1) & ~(to - 1); }

// A view of a mapped segment (both sides).
class Ring {
 public:
  Ring() = default;
  Ring(void* segment, uint64_t ringBytes)
      : header_(static_cast<SegmentHeader*>(segment)),
        data_(static_cast<unsigned char*>(segment) + kSegmentHeaderBytes),
        capacity_(ringBytes),
        stampKey_(header_->stampKey) {}

  SegmentHeader* header() const { return header_; }
  uint64_t capacity() const { return capacity_; }
  unsigned char* at(uint64_t pos) const { return data_ + (pos & (capacity_ - 1)); }

  // The slot at stream position `slot` holds its message (stampSlot: after writing the rest of the slot).
  void stampSlot(uint64_t slot) const {
    stampOf(slot).store(slotStamp(slot, stampKey_), std::memory_order_release);
  }
  bool stamped(uint64_t slot) const {
    return stampOf(slot).load(std::memory_order_acquire) == slotStamp(slot, stampKey_);
  }

  // Copies n bytes to or from stream position pos, wrapping at the end of the ring.
  void copyIn(uint64_t pos, const void* src, size_t n) const {
    size_t offset = pos & (capacity_ - 1);
    const size_t first = std::min(n, capacity_ - offset);
    copyBytes(data_ + offset, src, first);
    if (first < n) copyBytes(data_, static_cast<const unsigned char*>(src) + first, n - first);
  }
  void copyOut(uint64_t pos, void* dst, size_t n) const {
    size_t offset = pos & (capacity_ - 1);
    const size_t first = std::min(n, capacity_ - offset);
    copyBytes(dst, data_ + offset, first);
    if (first < n) copyBytes(static_cast<unsigned char*>(dst) + first, data_, n - first);
  }

 private:
  std::atomic_ref<uint64_t> stampOf(uint64_t slot) const {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(at(slot) + offsetof(MessageHeader, stamp)));
  }

  SegmentHeader* header_ = nullptr;
  unsigned char* data_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t stampKey_ = 0;
};

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_RING_H
