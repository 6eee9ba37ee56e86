// The messages of a communicator's control channel (core/comm/control_channel.h): fixed-size records that
// say a rank's communicator failed, or that a rank has waited long in an operation. They come from other
// processes, so decoding checks every field.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "weft/weft.h"

namespace weft {

// Every control message is this long on the wire, so a receive is always posted for exactly one.
inline constexpr size_t kControlMessageBytes = 512;
inline constexpr size_t kControlHeaderBytes = 24;
inline constexpr size_t kControlTextBytes = kControlMessageBytes - kControlHeaderBytes;

enum class ControlKind : uint16_t {
  Fault = 1,  // origin's communicator failed; text says why
  Stall = 2,  // origin has waited `seconds` in an operation; text names it and whom it waits for
};

struct ControlMessage {
  ControlKind kind = ControlKind::Fault;
  int origin = 0;                   // the rank that failed first, or that waits
  weftResult_t code = weftSuccess;  // Fault: the origin's error
  uint32_t seconds = 0;             // Stall: how long the origin has waited
  std::string text;                 // at most kControlTextBytes; longer text is cut when encoded
};

using ControlBytes = std::array<unsigned char, kControlMessageBytes>;

ControlBytes encodeControlMessage(const ControlMessage& message);

// The message, or nullopt with `problem` saying why the bytes are not a control message of this version
// from a rank of a communicator of `nranks`.
std::optional<ControlMessage> decodeControlMessage(std::span<const unsigned char> bytes, int nranks,
                                                   std::string* problem);

}  // namespace weft
