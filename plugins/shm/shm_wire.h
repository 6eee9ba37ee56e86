// What crosses the process boundary outside the ring: the listen handle, the hello a connector sends with
// its memfds, and the acceptor's reply. Fixed little-endian offsets, so that two builds of the plugin (say,
// another compiler) still agree; a version change is refused by both sides rather than misread.
#ifndef WEFT_PLUGINS_SHM_WIRE_H
#define WEFT_PLUGINS_SHM_WIRE_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "weft/plugin.h"

namespace weft::shm {

inline constexpr uint32_t kHandleMagic = 0x48534d57;  // "WMSH"
inline constexpr uint32_t kHelloMagic = 0x4c534d57;   // "WMSL"
inline constexpr uint32_t kReplyMagic = 0x52534d57;   // "WMSR"
inline constexpr uint16_t kWireVersion = 1;

// Abstract socket names are "weft-shm-" and 128 random bits in hex: unguessable, so another job (or user)
// on the host cannot squat on or stumble into a listener, and nothing is left in the file system.
inline constexpr char kSocketPrefix[] = "weft-shm-";
inline constexpr size_t kSocketNameBytes = sizeof(kSocketPrefix) - 1 + 32;

inline void putLe(unsigned char* p, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

inline uint64_t getLe(const unsigned char* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Handle (WEFT_NET_HANDLE_BYTES): 0 u32 magic, 4 u16 version, 6 u16 name length, 8 u32 listener pid,
// 12 u32 zero, 16 the socket name (no terminator); the rest is zero.
inline constexpr size_t kHandleNameOffset = 16;
static_assert(kHandleNameOffset + kSocketNameBytes <= WEFT_NET_HANDLE_BYTES);

struct Handle {
  std::string name;
  uint32_t pid = 0;
};

inline void encodeHandle(const std::string& name, uint32_t pid, unsigned char* out) {
  std::memset(out, 0, WEFT_NET_HANDLE_BYTES);
  putLe(out, kHandleMagic, 4);
  putLe(out + 4, kWireVersion, 2);
  putLe(out + 6, name.size(), 2);
  putLe(out + 8, pid, 4);
  std::copy(name.begin(), name.end(), out + kHandleNameOffset);  // length-prefixed above, not terminated
}

// Returns false when the bytes are not an shm handle of this version (or the name is not one of ours).
inline bool decodeHandle(const unsigned char* in, Handle* handle) {
  if (getLe(in, 4) != kHandleMagic || getLe(in + 4, 2) != kWireVersion) return false;
  if (getLe(in + 6, 2) != kSocketNameBytes) return false;
  std::string name(reinterpret_cast<const char*>(in + kHandleNameOffset), kSocketNameBytes);
  if (name.compare(0, sizeof(kSocketPrefix) - 1, kSocketPrefix) != 0) return false;
  for (size_t i = sizeof(kSocketPrefix) - 1; i < name.size(); ++i) {
    char c = name[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  handle->name = std::move(name);
  handle->pid = static_cast<uint32_t>(getLe(in + 8, 4));
  return true;
}

// Hello, one datagram with two fds attached (the connection's segment, the connector's doorbell):
// 0 u32 magic, 4 u16 version, 6 u16 flags, 8 u64 job token, 16 u64 connector id, 24 u32 pid, 28 u32 zero,
// 32 u64 ring bytes, 40 u64 probe address, 48 u64 probe value, 56 u64 zero.
inline constexpr size_t kHelloBytes = 64;
inline constexpr uint16_t kHelloOffersCma = 1;  // the connector has not disabled CMA

struct Hello {
  uint32_t magic = 0;
  uint16_t version = 0;
  uint16_t flags = 0;
  uint64_t jobToken = 0;
  uint64_t connectorId = 0;
  uint32_t pid = 0;
  uint64_t ringBytes = 0;
  uint64_t probeAddress = 0;
  uint64_t probeValue = 0;
};

inline void encodeHello(const Hello& h, unsigned char* out) {
  std::memset(out, 0, kHelloBytes);
  putLe(out, kHelloMagic, 4);
  putLe(out + 4, kWireVersion, 2);
  putLe(out + 6, h.flags, 2);
  putLe(out + 8, h.jobToken, 8);
  putLe(out + 16, h.connectorId, 8);
  putLe(out + 24, h.pid, 4);
  putLe(out + 32, h.ringBytes, 8);
  putLe(out + 40, h.probeAddress, 8);
  putLe(out + 48, h.probeValue, 8);
}

inline Hello decodeHello(const unsigned char* in) {
  Hello h;
  h.magic = static_cast<uint32_t>(getLe(in, 4));
  h.version = static_cast<uint16_t>(getLe(in + 4, 2));
  h.flags = static_cast<uint16_t>(getLe(in + 6, 2));
  h.jobToken = getLe(in + 8, 8);
  h.connectorId = getLe(in + 16, 8);
  h.pid = static_cast<uint32_t>(getLe(in + 24, 4));
  h.ringBytes = getLe(in + 32, 8);
  h.probeAddress = getLe(in + 40, 8);
  h.probeValue = getLe(in + 48, 8);
  return h;
}

// Reply, one datagram with the acceptor's doorbell fd attached: 0 u32 magic, 4 u16 version, 6 u16 flags,
// 8 u32 pid, 12 u32 zero.
inline constexpr size_t kReplyBytes = 16;
inline constexpr uint16_t kReplyUsesCma = 1;  // large messages go by process_vm_readv, not the ring

inline void encodeReply(uint16_t flags, uint32_t pid, unsigned char* out) {
  std::memset(out, 0, kReplyBytes);
  putLe(out, kReplyMagic, 4);
  putLe(out + 4, kWireVersion, 2);
  putLe(out + 6, flags, 2);
  putLe(out + 8, pid, 4);
}

// Compares two tokens in time independent of where they differ.
inline bool tokensEqual(uint64_t a, uint64_t b) {
  volatile uint64_t diff = 0;
  for (int i = 0; i < 8; ++i) diff = diff | (((a >> (8 * i)) ^ (b >> (8 * i))) & 0xff);
  return diff == 0;
}

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_WIRE_H
