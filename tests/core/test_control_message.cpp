// The control channel's messages (core/comm/control_message.h): what encodes decodes back, and every
// malformed field is refused with a reason, so that bytes from another process never become a fault
// notice or a stall report they do not describe.
#include <gtest/gtest.h>

#include <cstring>

#include "core/comm/control_message.h"

namespace weft {
namespace {

ControlMessage fault() {
  return {ControlKind::Fault, 2, weftRemoteError, 0, "allreduce #3: receive from rank 2 failed"};
}

std::string refusal(ControlBytes bytes, int nranks = 4) {
  std::string problem;
  EXPECT_FALSE(decodeControlMessage(bytes, nranks, &problem).has_value());
  return problem;
}

TEST(ControlMessage, RoundTrips) {
  for (const ControlMessage& m :
       {fault(), ControlMessage{ControlKind::Stall, 3, weftSuccess, 120, "allreduce #5 waiting for rank(s) 0"},
        ControlMessage{ControlKind::Fault, 0, weftTimeout, 0, ""}}) {
    std::string problem;
    auto back = decodeControlMessage(encodeControlMessage(m), 4, &problem);
    ASSERT_TRUE(back.has_value()) << problem;
    EXPECT_EQ(back->kind, m.kind);
    EXPECT_EQ(back->origin, m.origin);
    EXPECT_EQ(back->code, m.code);
    EXPECT_EQ(back->seconds, m.seconds);
    EXPECT_EQ(back->text, m.text);
  }
}

TEST(ControlMessage, LongTextIsCutToFit) {
  ControlMessage m = fault();
  m.text.assign(2 * kControlTextBytes, 'x');
  std::string problem;
  auto back = decodeControlMessage(encodeControlMessage(m), 4, &problem);
  ASSERT_TRUE(back.has_value()) << problem;
  EXPECT_EQ(back->text, std::string(kControlTextBytes, 'x'));
}

TEST(ControlMessage, RefusesEachMalformedField) {
  ControlBytes good = encodeControlMessage(fault());
  auto with = [&](size_t offset, std::initializer_list<unsigned char> bytes) {
    ControlBytes b = good;
    std::memcpy(&b[offset], bytes.begin(), bytes.size());
    return b;
  };
  EXPECT_EQ(refusal(with(0, {0, 0, 0, 0})), "not a control message");
  EXPECT_EQ(refusal(with(4, {2, 0})), "another version");
  EXPECT_EQ(refusal(with(6, {9, 0})), "unknown kind");
  EXPECT_EQ(refusal(with(8, {4, 0, 0, 0})), "origin is not a rank of the communicator");
  EXPECT_EQ(refusal(with(8, {0xff, 0xff, 0xff, 0xff})), "origin is not a rank of the communicator");
  EXPECT_EQ(refusal(with(12, {99, 0, 0, 0})), "not a result code");
  EXPECT_EQ(refusal(with(12, {0, 0, 0, 0})), "a fault without an error");
  EXPECT_EQ(refusal(with(20, {0xff, 0xff, 0, 0})), "text longer than the message");
  EXPECT_EQ(refusal(with(kControlHeaderBytes + 3, {0})), "text holds a NUL");
  std::string problem;
  EXPECT_FALSE(decodeControlMessage(std::span(good.data(), good.size() - 1), 4, &problem).has_value());
  EXPECT_EQ(problem, "wrong length");
  EXPECT_EQ(refusal(good, 2), "origin is not a rank of the communicator");  // rank 2 of a 2-rank communicator
}

}  // namespace
}  // namespace weft
