// Wire format of the tcp transport: the listen handle, the connection hello and the message header. All
// integers are little-endian on the wire, byte by byte, so that the format does not depend on the host.
// Header-only so that the tests can build and parse the same bytes.
#ifndef WEFT_PLUGINS_TCP_WIRE_H
#define WEFT_PLUGINS_TCP_WIRE_H

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "weft/plugin.h"

namespace weft::tcp {

inline constexpr uint32_t kHandleMagic = 0x48505457;   // "WTPH"
inline constexpr uint32_t kHelloMagic = 0x4c505457;    // "WTPL"
inline constexpr uint32_t kMessageMagic = 0x4d505457;  // "WTPM"
inline constexpr uint16_t kWireVersion = 1;

inline void putLe(unsigned char* p, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

inline uint64_t getLe(const unsigned char* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Handle (WEFT_NET_HANDLE_BYTES):
//   0  u32 magic   4 u16 version   6 u8 family (4 or 6)   7 u8 zero
//   8  port, 2 bytes in network order   10 u16 zero   12 u32 IPv6 scope id
//   16 address, 4 (IPv4) or 16 (IPv6) bytes in network order; the rest is zero.
inline constexpr size_t kHandleUsedBytes = 32;
static_assert(kHandleUsedBytes <= WEFT_NET_HANDLE_BYTES);

inline void encodeHandle(const sockaddr_storage& addr, unsigned char* handle) {
  std::memset(handle, 0, WEFT_NET_HANDLE_BYTES);
  putLe(handle, kHandleMagic, 4);
  putLe(handle + 4, kWireVersion, 2);
  if (addr.ss_family == AF_INET6) {
    sockaddr_in6 a6;
    std::memcpy(&a6, &addr, sizeof(a6));
    handle[6] = 6;
    std::memcpy(handle + 8, &a6.sin6_port, 2);
    putLe(handle + 12, a6.sin6_scope_id, 4);
    std::memcpy(handle + 16, &a6.sin6_addr, 16);
  } else {
    sockaddr_in a4;
    std::memcpy(&a4, &addr, sizeof(a4));
    handle[6] = 4;
    std::memcpy(handle + 8, &a4.sin_port, 2);
    std::memcpy(handle + 16, &a4.sin_addr, 4);
  }
}

// Returns false when the bytes are not a handle of this version.
inline bool decodeHandle(const unsigned char* handle, sockaddr_storage* addr, socklen_t* len) {
  if (getLe(handle, 4) != kHandleMagic || getLe(handle + 4, 2) != kWireVersion) return false;
  std::memset(addr, 0, sizeof(*addr));
  if (handle[6] == 6) {
    sockaddr_in6 a6{};
    a6.sin6_family = AF_INET6;
    std::memcpy(&a6.sin6_port, handle + 8, 2);
    a6.sin6_scope_id = static_cast<uint32_t>(getLe(handle + 12, 4));
    std::memcpy(&a6.sin6_addr, handle + 16, 16);
    std::memcpy(addr, &a6, sizeof(a6));
    *len = sizeof(a6);
    return true;
  }
  if (handle[6] == 4) {
    sockaddr_in a4{};
    a4.sin_family = AF_INET;
    std::memcpy(&a4.sin_port, handle + 8, 2);
    std::memcpy(&a4.sin_addr, handle + 16, 4);
    std::memcpy(addr, &a4, sizeof(a4));
    *len = sizeof(a4);
    return true;
  }
  return false;
}

// Hello, sent once by the connector: u32 magic, u16 version, u16 flags, u64 jobToken, u64 connectorId.
// Flag kHelloOffersPair: a pair offer follows (kPairOfferBytes): u64 pairKey, then the handle of the
// connector's own listener (kHandleUsedBytes). The acceptor may then send its connection of the same pairKey
// back to that listener on this very socket (tcp_setup.h), opening its direction with a plain hello.
inline constexpr size_t kHelloBytes = 24;
inline constexpr uint16_t kHelloOffersPair = 1;
inline constexpr size_t kPairOfferBytes = 8 + kHandleUsedBytes;

struct Hello {
  uint32_t magic;
  uint16_t version;
  uint16_t flags;
  uint64_t jobToken;
  uint64_t connectorId;
};

inline void encodeHello(uint64_t jobToken, uint64_t connectorId, unsigned char* out, uint16_t flags = 0) {
  std::memset(out, 0, kHelloBytes);
  putLe(out, kHelloMagic, 4);
  putLe(out + 4, kWireVersion, 2);
  putLe(out + 6, flags, 2);
  putLe(out + 8, jobToken, 8);
  putLe(out + 16, connectorId, 8);
}

inline Hello decodeHello(const unsigned char* in) {
  return Hello{static_cast<uint32_t>(getLe(in, 4)), static_cast<uint16_t>(getLe(in + 4, 2)),
               static_cast<uint16_t>(getLe(in + 6, 2)), getLe(in + 8, 8), getLe(in + 16, 8)};
}

struct PairOffer {
  uint64_t pairKey;
  unsigned char listenerHandle[kHandleUsedBytes];
};

inline void encodePairOffer(uint64_t pairKey, const unsigned char* listenerHandle, unsigned char* out) {
  putLe(out, pairKey, 8);
  std::memcpy(out + 8, listenerHandle, kHandleUsedBytes);
}

inline PairOffer decodePairOffer(const unsigned char* in) {
  PairOffer offer{getLe(in, 8), {}};
  std::memcpy(offer.listenerHandle, in + 8, kHandleUsedBytes);
  return offer;
}

// Message header, in front of every payload: u32 magic, u32 tag, u64 payload bytes.
inline constexpr size_t kHeaderBytes = 16;

struct Header {
  uint32_t magic;
  uint32_t tag;
  uint64_t length;
};

inline void encodeHeader(uint32_t tag, uint64_t length, unsigned char* out) {
  putLe(out, kMessageMagic, 4);
  putLe(out + 4, tag, 4);
  putLe(out + 8, length, 8);
}

inline Header decodeHeader(const unsigned char* in) {
  return Header{static_cast<uint32_t>(getLe(in, 4)), static_cast<uint32_t>(getLe(in + 4, 4)), getLe(in + 8, 8)};
}

// Compares two tokens in time independent of where they differ.
inline bool tokensEqual(uint64_t a, uint64_t b) {
  volatile uint64_t diff = 0;
  for (int i = 0; i < 8; ++i) diff = diff | (((a >> (8 * i)) ^ (b >> (8 * i))) & 0xff);
  return diff == 0;
}

}  // namespace weft::tcp

#endif  // WEFT_PLUGINS_TCP_WIRE_H
