#include "core/comm/control_message.h"

#include <algorithm>
#include <cstring>

namespace weft {
namespace {

// Layout (little-endian): magic u32 | version u16 | kind u16 | origin i32 | code i32 | seconds u32 |
// text length u32 | text bytes (the rest zero).
constexpr uint32_t kMagic = 0x4c435457;  // "WTCL"
constexpr uint16_t kVersion = 1;

void put(unsigned char* at, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) at[i] = static_cast<unsigned char>(value >> (8 * i));
}

uint64_t get(const unsigned char* at, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(at[i]) << (8 * i);
  return value;
}

}  // namespace

ControlBytes encodeControlMessage(const ControlMessage& message) {
  ControlBytes bytes{};
  size_t length = std::min(message.text.size(), kControlTextBytes);
  put(&bytes[0], kMagic, 4);
  put(&bytes[4], kVersion, 2);
  put(&bytes[6], static_cast<uint16_t>(message.kind), 2);
  put(&bytes[8], static_cast<uint32_t>(message.origin), 4);
  put(&bytes[12], static_cast<uint32_t>(message.code), 4);
  put(&bytes[16], message.seconds, 4);
  put(&bytes[20], length, 4);
  std::memcpy(&bytes[kControlHeaderBytes], message.text.data(), length);
  return bytes;
}

std::optional<ControlMessage> decodeControlMessage(std::span<const unsigned char> bytes, int nranks,
                                                   std::string* problem) {
  auto refuse = [&](const char* why) -> std::optional<ControlMessage> {
    *problem = why;
    return std::nullopt;
  };
  if (bytes.size() != kControlMessageBytes) return refuse("wrong length");
  if (get(&bytes[0], 4) != kMagic) return refuse("not a control message");
  if (get(&bytes[4], 2) != kVersion) return refuse("another version");
  ControlMessage message;
  auto kind = get(&bytes[6], 2);
  if (kind != static_cast<uint16_t>(ControlKind::Fault) && kind != static_cast<uint16_t>(ControlKind::Stall))
    return refuse("unknown kind");
  message.kind = static_cast<ControlKind>(kind);
  auto origin = static_cast<int32_t>(get(&bytes[8], 4));
  if (origin < 0 || origin >= nranks) return refuse("origin is not a rank of the communicator");
  message.origin = origin;
  auto code = static_cast<int32_t>(get(&bytes[12], 4));
  if (code < weftSuccess || code > weftNotSupported) return refuse("not a result code");
  message.code = static_cast<weftResult_t>(code);
  if (message.kind == ControlKind::Fault && message.code == weftSuccess) return refuse("a fault without an error");
  message.seconds = static_cast<uint32_t>(get(&bytes[16], 4));
  size_t length = get(&bytes[20], 4);
  if (length > kControlTextBytes) return refuse("text longer than the message");
  message.text.assign(reinterpret_cast<const char*>(&bytes[kControlHeaderBytes]), length);
  if (message.text.find('\0') != std::string::npos) return refuse("text holds a NUL");
  return message;
}

}  // namespace weft
