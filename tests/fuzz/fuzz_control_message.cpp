// A control-channel message (core/comm/control_message.cpp decodeControlMessage) as a rank receives it from
// another process: the input's first byte is the communicator's size, the rest the message. An accepted
// message names a rank of the communicator, a fault carries an error, the text fits and holds no NUL; its
// encoding repeats the input's header and text, and decodes to the same message.
#include <cstring>

#include "core/comm/control_message.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int nranks = data[0];
  std::span<const unsigned char> bytes(data + 1, size - 1);
  std::string problem;
  std::optional<weft::ControlMessage> message = weft::decodeControlMessage(bytes, nranks, &problem);
  if (!message) {
    FUZZ_CHECK(!problem.empty());
    return 0;
  }
  FUZZ_CHECK(message->origin >= 0 && message->origin < nranks);
  FUZZ_CHECK(message->kind != weft::ControlKind::Fault || message->code != weftSuccess);
  FUZZ_CHECK(message->text.size() <= weft::kControlTextBytes && message->text.find('\0') == std::string::npos);
  const weft::ControlBytes encoded = weft::encodeControlMessage(*message);
  const size_t used = weft::kControlHeaderBytes + message->text.size();
  FUZZ_CHECK(std::memcmp(encoded.data(), bytes.data(), used) == 0);
  std::optional<weft::ControlMessage> again = weft::decodeControlMessage(encoded, nranks, &problem);
  FUZZ_CHECK(again && again->kind == message->kind && again->origin == message->origin &&
             again->code == message->code && again->seconds == message->seconds && again->text == message->text);
  return 0;
}
