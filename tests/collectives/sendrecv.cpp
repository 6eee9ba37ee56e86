// The Send/Recv section: point-to-point inside weftGroupStart/End. A ring with 1 MiB messages (would
// deadlock without grouping), both directions at once, a send to self, a group on a stream, an ungrouped
// pairwise exchange, a group with an AllReduce after its Send/Recv, and one spanning two communicators.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "buffers.h"
#include "harness.h"
#include "inputs.h"
#include "sections.h"

namespace colltest {

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// One message: the sender's buffer holds its inputs for salt, the receiver's starts poisoned.
struct Message {
  weftDataType_t type;
  size_t count;
  uint64_t salt;
  int from, to;
  std::string label;
  GuardedBuffer send, recv;
  std::vector<unsigned char> sendCopy;
};

std::string describe(const Message& m) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s: %s count=%zu from rank %d to rank %d", m.label.c_str(),
                typeInfo(m.type).name, m.count, m.from, m.to);
  return buf;
}

enum Side : unsigned { kSendSide = 1, kRecvSide = 2 };

// Sets up this rank's side(s) of a message: the send buffer, the receive buffer, or both (self).
std::unique_ptr<Message> makeMessage(const std::string& label, weftDataType_t type, size_t count, int from, int to,
                                     uint64_t salt, unsigned sides) {
  auto m = std::make_unique<Message>();
  m->type = type;
  m->count = count;
  m->salt = salt;
  m->from = from;
  m->to = to;
  m->label = label;
  const size_t bytes = count * typeInfo(type).size;
  if (sides & kSendSide) {
    m->send.allocate(bytes);
    fillInputs(m->send.data(), type, InputKind::kSum, inputSeed(salt, from, type, InputKind::kSum), 0, count);
    m->sendCopy.assign(m->send.data(), m->send.data() + bytes);
  }
  if (sides & kRecvSide) m->recv.allocate(bytes);
  return m;
}

weftResult_t post(Message& m, const CommView& view, weftStream_t stream, bool sendSide) {
  if (sendSide) return weftSend(m.send.data(), m.count, m.type, m.to, view.comm, stream);
  return weftRecv(m.recv.data(), m.count, m.type, m.from, view.comm, stream);
}

void verify(Message& m, Report& report) {
  const std::string what = describe(m);
  ++report.calls;
  long long bad = 0;
  if (!m.send.guardsIntact(&bad) || !m.recv.guardsIntact(&bad)) {
    reportFailure(report, "guard byte overwritten at offset " + std::to_string(bad) + ": " + what);
  }
  // A count-0 message keeps an empty copy whose data() is null, and memcmp's arguments must not be null even
  // for 0 bytes (UBSan, nonnull-attribute).
  if (m.send.allocated() && !m.sendCopy.empty() &&
      std::memcmp(m.send.data(), m.sendCopy.data(), m.sendCopy.size()) != 0) {
    reportFailure(report, "send buffer modified: " + what);
  }
  if (!m.recv.allocated()) return;
  const size_t size = typeInfo(m.type).size;
  const uint64_t seed = inputSeed(m.salt, m.from, m.type, InputKind::kSum);
  size_t wrong = 0;
  unsigned char want[8];
  for (size_t i = 0; i < m.count; ++i) {
    const Elem expected = inputValue(m.type, InputKind::kSum, seed, i);
    encodeElem(want, m.type, expected);
    const unsigned char* got = m.recv.data() + i * size;
    if (std::memcmp(want, got, size) == 0) continue;
    if (wrong++ == 0) {
      reportFailure(report, "mismatch at index " + std::to_string(i) + ": got " +
                                formatElem(m.type, decodeElem(got, m.type)) + ", expected " +
                                formatElem(m.type, expected) + ": " + what);
    } else {
      ++report.failures;
    }
  }
  report.elements += m.count;
}

// The ring: every rank sends to rank + 1 and receives from rank - 1, in one group.
void ring(const CommView& view, weftDataType_t type, size_t count, bool recvFirst, weftStream_t stream,
          Report& report) {
  const int me = view.rank, np = view.size;
  const int next = (me + 1) % np, prev = (me + np - 1) % np;
  const uint64_t salt = nextSalt();
  const std::string label =
      std::string("ring") + (recvFirst ? " (recv posted first)" : "") + (stream ? " on a stream" : "");
  auto out = makeMessage(label, type, count, me, next, salt, kSendSide);
  auto in = makeMessage(label, type, count, prev, me, salt, kRecvSide);
  setCurrentOp(describe(*out));
  expectOk(weftGroupStart(), "weftGroupStart");
  if (recvFirst) expectOk(post(*in, view, stream, false), "weftRecv " + describe(*in));
  expectOk(post(*out, view, stream, true), "weftSend " + describe(*out));
  if (!recvFirst) expectOk(post(*in, view, stream, false), "weftRecv " + describe(*in));
  expectOk(weftGroupEnd(), "weftGroupEnd (" + label + ")");
  if (stream) expectOk(weftStreamSynchronize(stream), "weftStreamSynchronize (" + label + ")");
  verify(*out, report);
  verify(*in, report);
}

// Both directions at once: to next and to prev, from prev and from next. With two ranks next == prev,
// and the messages between one pair match in the order they were posted.
void bothDirections(const CommView& view, size_t count, Report& report) {
  const int me = view.rank, np = view.size;
  const int next = (me + 1) % np, prev = (me + np - 1) % np;
  const uint64_t saltForward = nextSalt(), saltBackward = nextSalt();
  auto toNext = makeMessage("both directions, forward", weftFloat32, count, me, next, saltForward, kSendSide);
  auto toPrev = makeMessage("both directions, backward", weftFloat32, count, me, prev, saltBackward, kSendSide);
  auto fromPrev = makeMessage("both directions, forward", weftFloat32, count, prev, me, saltForward, kRecvSide);
  auto fromNext = makeMessage("both directions, backward", weftFloat32, count, next, me, saltBackward, kRecvSide);
  setCurrentOp("Send/Recv both directions");
  expectOk(weftGroupStart(), "weftGroupStart");
  expectOk(post(*toNext, view, nullptr, true), "weftSend " + describe(*toNext));
  expectOk(post(*toPrev, view, nullptr, true), "weftSend " + describe(*toPrev));
  expectOk(post(*fromPrev, view, nullptr, false), "weftRecv " + describe(*fromPrev));
  expectOk(post(*fromNext, view, nullptr, false), "weftRecv " + describe(*fromNext));
  expectOk(weftGroupEnd(), "weftGroupEnd (both directions)");
  verify(*toNext, report);
  verify(*toPrev, report);
  verify(*fromPrev, report);
  verify(*fromNext, report);
}

void toSelf(const CommView& view, weftDataType_t type, size_t count, Report& report) {
  const int me = view.rank;
  auto m = makeMessage("send to self", type, count, me, me, nextSalt(), kSendSide | kRecvSide);
  setCurrentOp(describe(*m));
  expectOk(weftGroupStart(), "weftGroupStart");
  expectOk(post(*m, view, nullptr, true), "weftSend " + describe(*m));
  expectOk(post(*m, view, nullptr, false), "weftRecv " + describe(*m));
  expectOk(weftGroupEnd(), "weftGroupEnd (send to self)");
  verify(*m, report);
}

// Without a group: even ranks send then receive, odd ranks receive then send (partner rank ^ 1).
void pairwiseUngrouped(const CommView& view, size_t count, Report& report) {
  const int me = view.rank;
  const int partner = me ^ 1;
  const uint64_t salt = nextSalt();
  if (partner >= view.size) return;
  auto out = makeMessage("ungrouped pairwise", weftInt64, count, me, partner, salt, kSendSide);
  auto in = makeMessage("ungrouped pairwise", weftInt64, count, partner, me, salt, kRecvSide);
  setCurrentOp(describe(*out));
  if (me % 2 == 0) {
    expectOk(post(*out, view, nullptr, true), "weftSend " + describe(*out));
    expectOk(post(*in, view, nullptr, false), "weftRecv " + describe(*in));
  } else {
    expectOk(post(*in, view, nullptr, false), "weftRecv " + describe(*in));
    expectOk(post(*out, view, nullptr, true), "weftSend " + describe(*out));
  }
  verify(*out, report);
  verify(*in, report);
}

// One group holding a ring on each of two communicators: Send/Recv spanning communicators (the group
// then goes through the fusion planner, see core/collectives/submit.cpp).
void ringOnTwoComms(const CommView& a, const CommView& b, size_t count, Report& report) {
  const int me = a.rank, np = a.size;
  const int next = (me + 1) % np, prev = (me + np - 1) % np;
  const uint64_t saltA = nextSalt(), saltB = nextSalt();
  auto outA = makeMessage("ring on comm A of two", weftInt32, count, me, next, saltA, kSendSide);
  auto inA = makeMessage("ring on comm A of two", weftInt32, count, prev, me, saltA, kRecvSide);
  auto outB = makeMessage("ring on comm B of two", weftFloat64, count, me, prev, saltB, kSendSide);
  auto inB = makeMessage("ring on comm B of two", weftFloat64, count, next, me, saltB, kRecvSide);
  setCurrentOp("Send/Recv on two communicators in one group");
  expectOk(weftGroupStart(), "weftGroupStart");
  expectOk(post(*outA, a, nullptr, true), "weftSend " + describe(*outA));
  expectOk(post(*inB, b, nullptr, false), "weftRecv " + describe(*inB));
  expectOk(post(*inA, a, nullptr, false), "weftRecv " + describe(*inA));
  expectOk(post(*outB, b, nullptr, true), "weftSend " + describe(*outB));
  expectOk(weftGroupEnd(), "weftGroupEnd (two communicators)");
  for (Message* m : {outA.get(), inA.get(), outB.get(), inB.get()}) verify(*m, report);
}

// Send/Recv, then an AllReduce, in one group: the held Send/Recv go to the fusion planner with it, in order.
void ringThenAllReduce(const CommView& view, size_t count, Report& report) {
  const int me = view.rank, np = view.size;
  const int next = (me + 1) % np, prev = (me + np - 1) % np;
  const uint64_t salt = nextSalt();
  auto out = makeMessage("ring before an AllReduce", weftInt32, count, me, next, salt, kSendSide);
  auto in = makeMessage("ring before an AllReduce", weftInt32, count, prev, me, salt, kRecvSide);
  std::vector<int64_t> contribution(count), sum(count, -1);
  for (size_t i = 0; i < count; ++i) contribution[i] = me * 1000 + static_cast<int64_t>(i % 13);
  setCurrentOp("Send/Recv then AllReduce in one group");
  expectOk(weftGroupStart(), "weftGroupStart");
  expectOk(post(*out, view, nullptr, true), "weftSend " + describe(*out));
  expectOk(post(*in, view, nullptr, false), "weftRecv " + describe(*in));
  expectOk(weftAllReduce(contribution.data(), sum.data(), count, weftInt64, weftSum, view.comm, nullptr),
           "weftAllReduce in the group");
  expectOk(weftGroupEnd(), "weftGroupEnd (Send/Recv then AllReduce)");
  verify(*out, report);
  verify(*in, report);
  ++report.calls;
  report.elements += count;
  const int64_t ranks = np;
  for (size_t i = 0; i < count; ++i) {
    const int64_t want = 1000 * ranks * (ranks - 1) / 2 + ranks * static_cast<int64_t>(i % 13);
    if (sum[i] == want) continue;
    reportFailure(report, "AllReduce after Send/Recv in one group: element " + std::to_string(i) + " is " +
                              std::to_string(sum[i]) + ", expected " + std::to_string(want));
    break;
  }
}

}  // namespace

Report runSendRecvSection() {
  Report report;
  resetSalt(4000000000);
  CommView world = createWorldComm(nullptr);
  ring(world, weftInt32, kMiB / 4, false, nullptr, report);
  ring(world, weftInt32, kMiB / 4, true, nullptr, report);
  ring(world, weftUint8, kMiB, false, nullptr, report);
  ring(world, weftFloat16, 7, false, nullptr, report);
  ring(world, weftFloat64, 0, false, nullptr, report);
  bothDirections(world, kMiB / 4, report);
  bothDirections(world, 1000, report);
  toSelf(world, weftFloat32, kMiB / 4, report);
  toSelf(world, weftInt8, 7, report);
  pairwiseUngrouped(world, 1000, report);
  pairwiseUngrouped(world, kMiB / 8, report);
  ringThenAllReduce(world, 1000, report);
  CommView second = createWorldComm(nullptr);
  ringOnTwoComms(world, second, 1000, report);
  ringOnTwoComms(world, second, kMiB / 8, report);
  destroyComm(second);
  weftStream_t stream = nullptr;
  expectOk(weftStreamCreate(&stream), "weftStreamCreate");
  ring(world, weftBfloat16, kMiB / 2, false, stream, report);
  expectOk(weftStreamDestroy(stream), "weftStreamDestroy");
  destroyComm(world);
  return report;
}

}  // namespace colltest
