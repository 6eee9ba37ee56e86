// The layout of a connection's segment and its single-producer single-consumer byte ring.
//
// One sender process writes, one receiver process reads. head (bytes published by the sender) and tail
// (bytes consumed by the receiver) only grow and each sits in its own cache line, so neither side's
// stores invalidate the line the other side polls. Every message starts with a header in a 64-byte slot at
// a slot-aligned position: a header never wraps and is read in one piece. An inline message's payload
// follows its header; a CMA message is the header alone and its payload is read from the sender's memory,
// in one range (Cma) or, for a vectored send, in the pieces of a list the receiver reads there first (CmaList).
#ifndef WEFT_PLUGINS_SHM_RING_H
#define WEFT_PLUGINS_SHM_RING_H

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
inline constexpr uint16_t kSegmentVersion = 2;

inline constexpr size_t kMinRingBytes = size_t{64} << 10;
inline constexpr size_t kMaxRingBytes = size_t{1} << 30;
inline constexpr size_t kDefaultRingBytes = size_t{4} << 20;

struct SegmentHeader {
  uint32_t magic;  // written once by the creator, checked by the peer
  uint16_t version;
  uint16_t reserved;
  uint64_t ringBytes;
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
};
static_assert(sizeof(MessageHeader) <= kSlotBytes);

inline uint64_t alignUp(uint64_t v, uint64_t to) { return (v + to - 1) & ~(to - 1); }

// A view of a mapped segment (both sides).
class Ring {
 public:
  Ring() = default;
  Ring(void* segment, uint64_t ringBytes)
      : header_(static_cast<SegmentHeader*>(segment)),
        data_(static_cast<unsigned char*>(segment) + kSegmentHeaderBytes),
        capacity_(ringBytes) {}

  SegmentHeader* header() const { return header_; }
  uint64_t capacity() const { return capacity_; }
  unsigned char* at(uint64_t pos) const { return data_ + (pos & (capacity_ - 1)); }

  // Copies n bytes to or from stream position pos, wrapping at the end of the ring.
  void copyIn(uint64_t pos, const void* src, size_t n) const {
    size_t offset = pos & (capacity_ - 1);
    size_t first = n < capacity_ - offset ? n : capacity_ - offset;
    copyBytes(data_ + offset, src, first);
    if (first < n) copyBytes(data_, static_cast<const unsigned char*>(src) + first, n - first);
  }
  void copyOut(uint64_t pos, void* dst, size_t n) const {
    size_t offset = pos & (capacity_ - 1);
    size_t first = n < capacity_ - offset ? n : capacity_ - offset;
    copyBytes(dst, data_ + offset, first);
    if (first < n) copyBytes(static_cast<unsigned char*>(dst) + first, data_, n - first);
  }

 private:
  SegmentHeader* header_ = nullptr;
  unsigned char* data_ = nullptr;
  uint64_t capacity_ = 0;
};

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_RING_H
