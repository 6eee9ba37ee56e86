// Tests of the tcp transport plugin through its C ABI: the built shared object is dlopen'ed as the core does.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tcp_iface.h"
#include "tcp_wire.h"
#include "transport_test_support.h"
#include "weft/plugin.h"

namespace {

using namespace std::chrono_literals;
using namespace weft_test;

const weftTransportVecOps_v1* gVec = nullptr;  // the optional vectored extension
void* gCtx = nullptr;

// The plugin, then its vectored extension from the same library (null where it has none).
void loadTcpPlugin() {
  loadPlugin(WEFT_TCP_PLUGIN_PATH);
  if (gPlugin != nullptr && gVec == nullptr) {
    gVec = static_cast<const weftTransportVecOps_v1*>(dlsym(gLib, WEFT_TRANSPORT_VEC_SYMBOL_V1));
  }
}

// One context for the suite (init reads WEFT_SOCKET_IFNAME=lo), a listener per test.
class TcpPlugin : public TransportTest {
 protected:
  static void SetUpTestSuite() {
    setenv("WEFT_SOCKET_IFNAME", "lo", 1);
    loadTcpPlugin();
    ASSERT_NE(gPlugin, nullptr);
    if (gCtx == nullptr) {
      ASSERT_EQ(gPlugin->init(&kHost, &gCtx), weftSuccess);
    }
  }

  static void TearDownTestSuite() {
    if (gCtx != nullptr) {
      EXPECT_EQ(gPlugin->finalize(gCtx), weftSuccess);
    }
    gCtx = nullptr;
  }

  void SetUp() override { listenOn(gCtx); }
  void TearDown() override { closeAll(); }
};

TEST_F(TcpPlugin, EntryTable) {
  EXPECT_EQ(gPlugin->abiVersion, static_cast<unsigned>(WEFT_PLUGIN_ABI_VERSION));
  EXPECT_STREQ(gPlugin->name, "tcp");
  EXPECT_EQ(gPlugin->kind, weftPluginTransport);
  ASSERT_NE(gOps, nullptr);
  EXPECT_EQ(gPlugin->backend, nullptr);
  weftTransportProps_v1 props{};
  ASSERT_EQ(gPlugin->getProperties(gCtx, &props), weftSuccess);
  EXPECT_STREQ(props.name, "tcp");
  EXPECT_EQ(props.reach, weftReachAny);
  EXPECT_GT(props.bandwidthGBps, 0.0);
  void* mhandle = reinterpret_cast<void*>(1);
  char buf[8];
  EXPECT_EQ(gOps->regMem(nullptr, buf, sizeof(buf), &mhandle), weftSuccess);
  EXPECT_EQ(mhandle, nullptr);
  EXPECT_EQ(gOps->deregMem(nullptr, mhandle), weftSuccess);
}

TEST_F(TcpPlugin, VecEntryTable) {
  ASSERT_NE(gVec, nullptr) << "no " WEFT_TRANSPORT_VEC_SYMBOL_V1;
  EXPECT_EQ(gVec->abiVersion, 1u);
  EXPECT_NE(gVec->isendv, nullptr);
  EXPECT_NE(gVec->irecvv, nullptr);
}

TEST_F(TcpPlugin, HandleHoldsLoopbackAddress) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  ASSERT_TRUE(weft::tcp::decodeHandle(handle_, &addr, &len));
  ASSERT_EQ(addr.ss_family, AF_INET);
  sockaddr_in a4;
  std::memcpy(&a4, &addr, sizeof(a4));
  EXPECT_EQ(ntohl(a4.sin_addr.s_addr), INADDR_LOOPBACK);
  EXPECT_NE(a4.sin_port, 0);
}

TEST_F(TcpPlugin, ConnectAcceptCarriesConnectorId) {
  Pair& a = newPair(0x1234500000007ULL);
  EXPECT_EQ(a.acceptedId, 0x1234500000007ULL);
  Pair& b = newPair(42);
  EXPECT_EQ(b.acceptedId, 42u);
}

TEST_F(TcpPlugin, WrongTokenRefusedLaterCorrectAccepted) {
  // The connector cannot tell: its connection completes, but the acceptor never returns it.
  void* bad = nullptr;
  void* recv = nullptr;
  uint64_t id = 0;
  auto deadline = Clock::now() + 10s;
  while (bad == nullptr && Clock::now() < deadline) {
    ASSERT_EQ(gOps->connect(gCtx, handle_, kToken ^ 1, 99, &bad), weftSuccess);
    ASSERT_EQ(gOps->accept(listen_, &recv, &id), weftSuccess);
    ASSERT_EQ(recv, nullptr);
  }
  ASSERT_NE(bad, nullptr);
  auto until = Clock::now() + 200ms;
  while (Clock::now() < until) {
    ASSERT_EQ(gOps->accept(listen_, &recv, &id), weftSuccess);
    ASSERT_EQ(recv, nullptr);
    gOps->waitReady(gCtx, 10000);
  }
  EXPECT_TRUE(logContains("wrong job token"));

  Pair& good = newPair(7);
  EXPECT_EQ(good.acceptedId, 7u);

  // Sends on the refused connection fail soon (the acceptor closed it).
  weftResult_t res = weftSuccess;
  char byte = 1;
  deadline = Clock::now() + 10s;
  while (res == weftSuccess && Clock::now() < deadline) {
    void* r = nullptr;
    res = gOps->isend(bad, &byte, 1, 0, nullptr, &r);
    if (res == weftSuccess) {
      size_t size = 0;
      res = waitRequest(gCtx, r, &size, 10s);
    }
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(res, weftRemoteError);
  EXPECT_EQ(gOps->closeSend(bad), weftSuccess);
}

// Speaks the wire format over a raw socket: a garbage hello is dropped, a hello in pieces is accepted.
TEST_F(TcpPlugin, RawHelloInPiecesAndGarbage) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  ASSERT_TRUE(weft::tcp::decodeHandle(handle_, &addr, &len));
  auto rawConnect = [&] {
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
    return fd;
  };
  void* recv = nullptr;
  uint64_t id = 0;

  int garbage = rawConnect();
  unsigned char junk[weft::tcp::kHelloBytes];
  std::memset(junk, 0x5a, sizeof(junk));
  ASSERT_EQ(send(garbage, junk, sizeof(junk), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(junk)));

  int fd = rawConnect();
  unsigned char hello[weft::tcp::kHelloBytes];
  weft::tcp::encodeHello(kToken, 555, hello);
  for (size_t i = 0; i < sizeof(hello); i += 5) {
    size_t n = std::min<size_t>(5, sizeof(hello) - i);
    ASSERT_EQ(send(fd, hello + i, n, MSG_NOSIGNAL), static_cast<ssize_t>(n));
    std::this_thread::sleep_for(2ms);
    if (recv == nullptr) {
      ASSERT_EQ(gOps->accept(listen_, &recv, &id), weftSuccess);
    }
    if (i + n < sizeof(hello)) {
      ASSERT_EQ(recv, nullptr);
    }
  }
  auto deadline = Clock::now() + 10s;
  while (recv == nullptr && Clock::now() < deadline) {
    ASSERT_EQ(gOps->accept(listen_, &recv, &id), weftSuccess);
    gOps->waitReady(gCtx, 1000);
  }
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(id, 555u);
  EXPECT_TRUE(logContains("not a weft tcp hello"));

  // A message framed by hand arrives.
  unsigned char msg[weft::tcp::kHeaderBytes + 3];
  weft::tcp::encodeHeader(9, 3, msg);
  std::memcpy(msg + weft::tcp::kHeaderBytes, "abc", 3);
  ASSERT_EQ(send(fd, msg, sizeof(msg), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(msg)));
  char buf[8] = {};
  void* r = nullptr;
  ASSERT_EQ(gOps->irecv(recv, buf, sizeof(buf), 9, nullptr, &r), weftSuccess);
  size_t size = 0;
  ASSERT_EQ(waitRequest(gCtx, r, &size), weftSuccess);
  EXPECT_EQ(size, 3u);
  EXPECT_EQ(std::string(buf, 3), "abc");
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
  close(fd);
  close(garbage);
}

TEST_F(TcpPlugin, RoundTripSizesTwoThreads) {
  Pair& p = newPair();
  std::vector<size_t> sizes;
  for (int round = 0; round < 3; ++round) {
    for (size_t s : {size_t{0}, size_t{1}, size_t{4099}, size_t{1} << 20, size_t{64} << 20}) sizes.push_back(s);
  }
  roundTrip(gCtx, p, sizes, 3, Completion::kAnyOrder);
}

TEST_F(TcpPlugin, ManySmallMessagesInFlight) {
  Pair& p = newPair();
  std::vector<size_t> sizes;
  for (size_t m = 0; m < 3000; ++m) sizes.push_back((m * 37) % 5000);
  roundTrip(gCtx, p, sizes, 0, Completion::kAnyOrder);
}

// Two connections used by two threads at the same time, each thread sending on one and receiving on the other,
// while a third thread calls waitReady.
TEST_F(TcpPlugin, TwoConnectionsTwoThreads) {
  Pair& a = newPair(1);
  Pair& b = newPair(2);
  // Accept order is not connect order: pair each send with its receive by connector id.
  if (a.acceptedId != 1) std::swap(a.recv, b.recv);
  std::vector<size_t> sizes;
  for (size_t m = 0; m < 200; ++m) sizes.push_back((m * 7919) % 300000);
  crossTraffic(gCtx, a, b, sizes, Completion::kAnyOrder);
}

// The sender is another process with its own plugin context.
TEST_F(TcpPlugin, RoundTripForkedSender) {
  std::vector<size_t> sizes = {0, 1, 4099, size_t{1} << 20, size_t{64} << 20, 17, 0};
  pid_t pid = forkSender(handle_, 77, [&](void* ctx, void* send) { sendAll(ctx, send, sizes, 5); });
  ASSERT_GT(pid, 0);
  uint64_t id = 0;
  void* recv = acceptFrom(gCtx, listen_, &id);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(id, 77u);
  recvAll(gCtx, recv, sizes, 5, Completion::kAnyOrder);
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
  EXPECT_EQ(reap(pid), 0);
}

TEST_F(TcpPlugin, LongerMessageFailsWithoutOverflow) {
  Pair& p = newPair();
  constexpr size_t kGuard = 64, kPosted = 100;
  std::vector<unsigned char> buf(kGuard + kPosted + kGuard, 0xa5);
  std::vector<unsigned char> msg = makeMessage(0, 200);
  void* rr = nullptr;
  void* sr = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, buf.data() + kGuard, kPosted, 4, nullptr, &rr), weftSuccess);
  ASSERT_EQ(gOps->isend(p.send, msg.data(), msg.size(), 4, nullptr, &sr), weftSuccess);
  size_t size = 0;
  EXPECT_EQ(waitRequest(gCtx, sr, &size), weftSuccess);
  EXPECT_EQ(waitRequest(gCtx, rr, &size), weftRemoteError);
  for (unsigned char c : buf) ASSERT_EQ(c, 0xa5);
  EXPECT_TRUE(logContains("message of 200 bytes for a receive of 100 bytes"));
  // The connection is unusable afterwards: later receives fail at once.
  EXPECT_EQ(gOps->irecv(p.recv, buf.data(), 1, 4, nullptr, &rr), weftRemoteError);
}

TEST_F(TcpPlugin, TagMismatchFails) {
  Pair& p = newPair();
  char out[4] = {1, 2, 3, 4};
  char in[4] = {};
  void* sr = nullptr;
  void* rr = nullptr;
  ASSERT_EQ(gOps->isend(p.send, out, 4, 1, nullptr, &sr), weftSuccess);
  ASSERT_EQ(gOps->irecv(p.recv, in, 4, 2, nullptr, &rr), weftSuccess);
  size_t size = 0;
  EXPECT_EQ(waitRequest(gCtx, sr, &size), weftSuccess);
  EXPECT_EQ(waitRequest(gCtx, rr, &size), weftRemoteError);
  EXPECT_TRUE(logContains("tag mismatch"));
  EXPECT_EQ(std::string(in, 4), std::string(4, '\0'));
}

TEST_F(TcpPlugin, ShorterMessageReportsItsSize) {
  Pair& p = newPair();
  std::vector<unsigned char> buf(100, 0xa5);
  for (size_t len : {size_t{10}, size_t{5}, size_t{0}, size_t{100}}) {
    std::vector<unsigned char> msg = makeMessage(len, len);
    std::fill(buf.begin(), buf.end(), 0xa5);
    void* sr = nullptr;
    void* rr = nullptr;
    ASSERT_EQ(gOps->irecv(p.recv, buf.data(), buf.size(), 0, nullptr, &rr), weftSuccess);
    ASSERT_EQ(gOps->isend(p.send, msg.data(), len, 0, nullptr, &sr), weftSuccess);
    size_t size = 999;
    ASSERT_EQ(waitRequest(gCtx, sr, &size), weftSuccess);
    EXPECT_EQ(size, len);
    ASSERT_EQ(waitRequest(gCtx, rr, &size), weftSuccess);
    EXPECT_EQ(size, len);
    EXPECT_TRUE(checkMessage(len, buf.data(), len));
    for (size_t i = len; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xa5);
  }
}

TEST_F(TcpPlugin, ZeroLengthWithNullBuffer) {
  Pair& p = newPair();
  void* sr = nullptr;
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, nullptr, 0, 0, nullptr, &rr), weftSuccess);
  ASSERT_EQ(gOps->isend(p.send, nullptr, 0, 0, nullptr, &sr), weftSuccess);
  size_t size = 1;
  EXPECT_EQ(waitRequest(gCtx, sr, &size), weftSuccess);
  EXPECT_EQ(size, 0u);
  size = 1;
  EXPECT_EQ(waitRequest(gCtx, rr, &size), weftSuccess);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(gOps->isend(p.send, nullptr, 1, 0, nullptr, &sr), weftInvalidArgument);
  EXPECT_EQ(gOps->isend(p.recv, nullptr, 0, 0, nullptr, &sr), weftInvalidUsage);
}

// Vectored messages (weftTransportVecOps_v1).

constexpr unsigned char kUntouched = 0xee;
constexpr size_t kGap = 8;

// The buffers of one message: pieces of the given sizes in one allocation, with kGap bytes of kUntouched
// before, between and after them. Every other empty piece has NULL data.
struct Pieces {
  std::vector<unsigned char> store;
  std::vector<weftTransportIov_v1> iov;
  size_t total = 0;

  explicit Pieces(const std::vector<size_t>& sizes) {
    std::vector<size_t> offsets;
    size_t at = kGap;
    for (size_t size : sizes) {
      offsets.push_back(at);
      at += size + kGap;
      total += size;
    }
    store.assign(at, kUntouched);
    bool nullEmpty = false;
    for (size_t i = 0; i < sizes.size(); ++i) {
      void* data = store.data() + offsets[i];
      if (sizes[i] == 0 && (nullEmpty = !nullEmpty)) data = nullptr;
      iov.push_back({data, sizes[i]});
    }
  }

  int count() const { return static_cast<int>(iov.size()); }

  // Writes message m's bytes into the pieces.
  void fill(size_t m) {
    size_t k = 0;
    for (const weftTransportIov_v1& p : iov) {
      for (size_t j = 0; j < p.size; ++j) static_cast<unsigned char*>(p.data)[j] = pattern(m, k++);
    }
  }

  // The first len bytes of the pieces are message m's; every other byte (the rest of the pieces, the gaps)
  // is untouched.
  ::testing::AssertionResult holds(size_t m, size_t len) const {
    std::vector<unsigned char> expected(store.size(), kUntouched);
    size_t k = 0;
    for (const weftTransportIov_v1& p : iov) {
      if (p.size == 0) continue;
      size_t at = static_cast<const unsigned char*>(p.data) - store.data();
      for (size_t j = 0; j < p.size; ++j, ++k) {
        if (k < len) expected[at + j] = pattern(m, k);
      }
    }
    for (size_t i = 0; i < store.size(); ++i) {
      if (store[i] != expected[i]) {
        return ::testing::AssertionFailure() << "byte " << i << " of " << store.size() << " is " << int{store[i]}
                                             << ", expected " << int{expected[i]};
      }
    }
    return ::testing::AssertionSuccess();
  }
};

// Splits total bytes into pieces: 1 to 6, or (many) 100 to 160, empty and 1-byte ones among them.
std::vector<size_t> randomLayout(std::mt19937_64& rng, size_t total, bool many) {
  size_t count = many ? 100 + rng() % 61 : 1 + rng() % 6;
  std::vector<size_t> sizes(count);
  std::vector<size_t*> shares;
  size_t ones = 0;
  for (size_t& size : sizes) {
    switch (rng() % 4) {
      case 0:
        size = 0;
        break;
      case 1:
        size = ones < total ? 1 : 0;
        ones += size;
        break;
      default:
        shares.push_back(&size);
    }
  }
  size_t rest = total - ones;
  if (shares.empty()) {
    if (rest > 0) sizes.push_back(rest);
    return sizes;
  }
  std::vector<size_t> cuts;
  for (size_t i = 1; i < shares.size(); ++i) cuts.push_back(rng() % (rest + 1));
  cuts.push_back(0);
  cuts.push_back(rest);
  std::sort(cuts.begin(), cuts.end());
  for (size_t i = 0; i < shares.size(); ++i) *shares[i] = cuts[i + 1] - cuts[i];
  return sizes;
}

// One message of a vectored round trip: sent and received vectored or plain (one piece).
struct VecMessage {
  size_t length = 0;
  bool sendVectored = false;
  bool recvVectored = false;
  std::unique_ptr<Pieces> out;
  std::unique_ptr<Pieces> in;
};

weftResult_t postSend(void* comm, VecMessage& msg, uint32_t tag, void** request) {
  if (msg.sendVectored) return gVec->isendv(comm, msg.out->iov.data(), msg.out->count(), tag, request);
  return gOps->isend(comm, msg.out->iov[0].data, msg.out->total, tag, nullptr, request);
}

weftResult_t postRecv(void* comm, VecMessage& msg, uint32_t tag, void** request) {
  if (msg.recvVectored) return gVec->irecvv(comm, msg.in->iov.data(), msg.in->count(), tag, request);
  return gOps->irecv(comm, msg.in->iov[0].data, msg.in->total, tag, nullptr, request);
}

// Sends every message (all posted at once), checking completion in order.
void sendAllVec(void* ctx, void* sendComm, std::vector<VecMessage>& msgs, uint32_t tag) {
  std::vector<void*> reqs(msgs.size(), nullptr);
  for (size_t m = 0; m < msgs.size(); ++m) ASSERT_EQ(postSend(sendComm, msgs[m], tag, &reqs[m]), weftSuccess);
  for (size_t m = 0; m < msgs.size(); ++m) {
    size_t size = 12345;
    ASSERT_EQ(waitRequest(ctx, reqs[m], &size), weftSuccess) << "message " << m;
    EXPECT_EQ(size, msgs[m].length) << "message " << m;
  }
}

// Receives every message (all posted at once), testing the newest first, and checks the bytes.
void recvAllVec(void* ctx, void* recvComm, std::vector<VecMessage>& msgs, uint32_t tag) {
  std::vector<void*> reqs(msgs.size(), nullptr);
  for (size_t m = 0; m < msgs.size(); ++m) ASSERT_EQ(postRecv(recvComm, msgs[m], tag, &reqs[m]), weftSuccess);
  testUntilDone(ctx, reqs, Completion::kAnyOrder, [&](size_t k, size_t size) {
    EXPECT_EQ(size, msgs[k].length) << "message " << k;
    EXPECT_TRUE(msgs[k].in->holds(k, msgs[k].length)) << "message " << k;
  });
}

// Messages for a vectored round trip (seeded): vectored sends into plain receives, plain sends into vectored
// receives, and vectored into vectored, with random piece layouts (empty and 1-byte pieces, 100+ pieces: more
// than one system call's iovecs), lengths on both sides of the small-receive threshold (4096) and up to 3 MB
// (about 1 in 19), some received into more room than they need. The first two are fixed: an empty message
// of empty pieces, and 150 1-byte pieces both ways.
std::vector<VecMessage> makeVecMessages(uint64_t seed, size_t count) {
  std::mt19937_64 rng(seed);
  const size_t lengths[] = {
      0,    1,    2,    7,    100,   1000,  4080,          4095,           4096,         4097,
      4099, 4112, 5000, 8192, 16385, 65536, (1 << 20) + 3, (2 << 20) + 17, (3 << 20) - 5};
  std::vector<VecMessage> msgs(count);
  for (size_t m = 0; m < count; ++m) {
    VecMessage& msg = msgs[m];
    msg.length = lengths[rng() % std::size(lengths)];
    if (msg.length > (1 << 20) && rng() % 3 != 0) msg.length = lengths[rng() % 8];
    msg.sendVectored = m % 3 != 1;
    msg.recvVectored = m % 3 != 0;
    size_t room = msg.length + (rng() % 4 == 0 ? rng() % 200 : 0);
    msg.out = std::make_unique<Pieces>(msg.sendVectored ? randomLayout(rng, msg.length, rng() % 3 == 0)
                                                        : std::vector<size_t>{msg.length});
    msg.in = std::make_unique<Pieces>(msg.recvVectored ? randomLayout(rng, room, rng() % 3 == 0)
                                                       : std::vector<size_t>{room});
  }
  msgs[0].length = 0;
  msgs[0].sendVectored = msgs[0].recvVectored = true;
  msgs[0].out = std::make_unique<Pieces>(std::vector<size_t>{0, 0, 0});
  msgs[0].in = std::make_unique<Pieces>(std::vector<size_t>{0, 0});
  msgs[1].length = 150;
  msgs[1].sendVectored = msgs[1].recvVectored = true;
  msgs[1].out = std::make_unique<Pieces>(std::vector<size_t>(150, 1));
  msgs[1].in = std::make_unique<Pieces>(std::vector<size_t>(150, 1));
  for (size_t m = 0; m < count; ++m) msgs[m].out->fill(m);
  return msgs;
}

// All of makeVecMessages(seed, count) in flight at once, the receiver in a thread of its own.
void vecRoundTrip(void* ctx, const Pair& p, uint64_t seed, size_t count) {
  std::vector<VecMessage> msgs = makeVecMessages(seed, count);
  std::thread receiver([&] { recvAllVec(ctx, p.recv, msgs, 6); });
  sendAllVec(ctx, p.send, msgs, 6);
  receiver.join();
}

TEST_F(TcpPlugin, VecRoundTripRandomLayouts) {
  ASSERT_NE(gVec, nullptr);
  for (uint64_t seed : {1, 2}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    vecRoundTrip(gCtx, newPair(), seed, 300);
  }
}

// A message longer than the pieces of its irecvv fails (small and large receive paths) and writes nothing.
TEST_F(TcpPlugin, VecLongerMessageFailsWithoutOverflow) {
  ASSERT_NE(gVec, nullptr);
  struct Case {
    std::vector<size_t> layout;
    size_t sent;
  };
  const Case cases[] = {{{30, 0, 40, 1, 29}, 200}, {{3000, 0, 1, 1999}, 6000}};
  for (const Case& c : cases) {
    Pair& p = newPair();
    Pieces in(c.layout);
    std::vector<unsigned char> msg = makeMessage(0, c.sent);
    void* rr = nullptr;
    void* sr = nullptr;
    ASSERT_EQ(gVec->irecvv(p.recv, in.iov.data(), in.count(), 4, &rr), weftSuccess);
    ASSERT_EQ(gOps->isend(p.send, msg.data(), msg.size(), 4, nullptr, &sr), weftSuccess);
    size_t size = 0;
    EXPECT_EQ(waitRequest(gCtx, sr, &size), weftSuccess);
    EXPECT_EQ(waitRequest(gCtx, rr, &size), weftRemoteError);
    EXPECT_TRUE(in.holds(0, 0));
    std::string expected =
        "message of " + std::to_string(c.sent) + " bytes for a receive of " + std::to_string(in.total) + " bytes";
    EXPECT_TRUE(logContains(expected)) << expected;
    EXPECT_EQ(gVec->irecvv(p.recv, in.iov.data(), in.count(), 4, &rr), weftRemoteError);
  }
}

TEST_F(TcpPlugin, VecBadArguments) {
  ASSERT_NE(gVec, nullptr);
  Pair& p = newPair();
  char byte = 0;
  void* r = reinterpret_cast<void*>(1);
  weftTransportIov_v1 good[2] = {{&byte, 1}, {nullptr, 0}};
  weftTransportIov_v1 nullData[2] = {{&byte, 1}, {nullptr, 1}};
  weftTransportIov_v1 huge[2] = {{&byte, SIZE_MAX}, {&byte, 1}};
  for (bool send : {true, false}) {
    auto post = send ? gVec->isendv : gVec->irecvv;
    void* comm = send ? p.send : p.recv;
    void* other = send ? p.recv : p.send;
    EXPECT_EQ(post(nullptr, good, 2, 0, &r), weftInvalidArgument);
    EXPECT_EQ(post(comm, good, 2, 0, nullptr), weftInvalidArgument);
    EXPECT_EQ(post(comm, nullptr, 1, 0, &r), weftInvalidArgument);
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(post(comm, good, 0, 0, &r), weftInvalidArgument);
    EXPECT_EQ(post(comm, good, -1, 0, &r), weftInvalidArgument);
    EXPECT_EQ(post(comm, nullData, 2, 0, &r), weftInvalidArgument);
    EXPECT_EQ(post(comm, huge, 2, 0, &r), weftInvalidArgument);
    EXPECT_EQ(post(other, good, 2, 0, &r), weftInvalidUsage);
  }
  // Nothing was queued: a message still goes through.
  char in[2] = {};
  weftTransportIov_v1 into[3] = {{nullptr, 0}, {in, 1}, {in + 1, 1}};
  void* sr = nullptr;
  void* rr = nullptr;
  byte = 'x';
  ASSERT_EQ(gVec->irecvv(p.recv, into, 3, 0, &rr), weftSuccess);
  ASSERT_EQ(gVec->isendv(p.send, good, 2, 0, &sr), weftSuccess);
  size_t size = 0;
  EXPECT_EQ(waitRequest(gCtx, sr, &size), weftSuccess);
  EXPECT_EQ(size, 1u);
  EXPECT_EQ(waitRequest(gCtx, rr, &size), weftSuccess);
  EXPECT_EQ(size, 1u);
  EXPECT_EQ(in[0], 'x');
  EXPECT_EQ(in[1], 0);
}

TEST_F(TcpPlugin, ReceiverClosesMidTransfer) {
  Pair& p = newPair();
  std::vector<unsigned char> out(size_t{64} << 20, 1);
  std::vector<unsigned char> in(out.size());
  void* sr = nullptr;
  void* rr = nullptr;
  ASSERT_EQ(gOps->isend(p.send, out.data(), out.size(), 0, nullptr, &sr), weftSuccess);
  ASSERT_EQ(gOps->irecv(p.recv, in.data(), in.size(), 0, nullptr, &rr), weftSuccess);
  int done = 0;
  size_t size = 0;
  ASSERT_EQ(gOps->test(rr, &done, &size), weftSuccess);
  ASSERT_EQ(done, 0);
  ASSERT_EQ(gOps->closeRecv(p.recv), weftSuccess);  // the pending receive goes with it
  p.recv = nullptr;
  auto start = Clock::now();
  EXPECT_EQ(waitRequest(gCtx, sr, &size, 20s), weftRemoteError);
  EXPECT_LT(Clock::now() - start, 20s);
}

TEST_F(TcpPlugin, SenderClosesMidTransfer) {
  Pair& p = newPair();
  std::vector<unsigned char> out(size_t{64} << 20, 1);
  std::vector<unsigned char> in(out.size());
  void* sr = nullptr;
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, in.data(), in.size(), 0, nullptr, &rr), weftSuccess);
  ASSERT_EQ(gOps->isend(p.send, out.data(), out.size(), 0, nullptr, &sr), weftSuccess);
  ASSERT_EQ(gOps->closeSend(p.send), weftSuccess);
  p.send = nullptr;
  size_t size = 0;
  EXPECT_EQ(waitRequest(gCtx, rr, &size, 20s), weftRemoteError);
  EXPECT_TRUE(logContains("closed by the peer in the middle of a message"));
}

TEST_F(TcpPlugin, PeerClosedBeforeAnyData) {
  Pair& p = newPair();
  char in[16];
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, in, sizeof(in), 0, nullptr, &rr), weftSuccess);
  ASSERT_EQ(gOps->closeSend(p.send), weftSuccess);
  p.send = nullptr;
  size_t size = 0;
  EXPECT_EQ(waitRequest(gCtx, rr, &size, 20s), weftRemoteError);
}

TEST_F(TcpPlugin, CloseWithPendingRequests) {
  Pair& p = newPair();
  std::vector<unsigned char> out(size_t{32} << 20, 1);
  char in[16];
  void* r = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, in, sizeof(in), 0, nullptr, &r), weftSuccess);
  ASSERT_EQ(gOps->irecv(p.recv, in, sizeof(in), 0, nullptr, &r), weftSuccess);
  ASSERT_EQ(gOps->isend(p.send, out.data(), out.size(), 0, nullptr, &r), weftSuccess);
  ASSERT_EQ(gOps->isend(p.send, out.data(), out.size(), 0, nullptr, &r), weftSuccess);
}

TEST_F(TcpPlugin, WaitReadyHonoursTimeout) {
  // Nothing pending (the listen socket has no connection waiting): the full timeout.
  auto start = Clock::now();
  EXPECT_EQ(gOps->waitReady(gCtx, 50000), weftSuccess);
  auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, 40ms);
  EXPECT_LT(elapsed, 1s);

  start = Clock::now();
  EXPECT_EQ(gOps->waitReady(gCtx, 0), weftSuccess);
  EXPECT_LT(Clock::now() - start, 50ms);

  // A receive pending without data: the timeout again.
  Pair& p = newPair();
  char in[8];
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, in, sizeof(in), 0, nullptr, &rr), weftSuccess);
  start = Clock::now();
  EXPECT_EQ(gOps->waitReady(gCtx, 100000), weftSuccess);
  elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, 80ms);
  EXPECT_LT(elapsed, 1s);

  // Data arriving wakes it well before its timeout.
  std::thread sender([&] {
    std::this_thread::sleep_for(50ms);
    void* sr = nullptr;
    size_t size = 0;
    EXPECT_EQ(gOps->isend(p.send, "1234567", 8, 0, nullptr, &sr), weftSuccess);
    EXPECT_EQ(waitRequest(gCtx, sr, &size), weftSuccess);
  });
  start = Clock::now();
  EXPECT_EQ(gOps->waitReady(gCtx, 10000000), weftSuccess);
  EXPECT_LT(Clock::now() - start, 5s);
  sender.join();
  size_t size = 0;
  EXPECT_EQ(waitRequest(gCtx, rr, &size), weftSuccess);
  EXPECT_STREQ(in, "1234567");
}

TEST_F(TcpPlugin, BadArguments) {
  unsigned char bogus[WEFT_NET_HANDLE_BYTES] = {};
  void* send = reinterpret_cast<void*>(1);
  EXPECT_EQ(gOps->connect(gCtx, bogus, kToken, 1, &send), weftInvalidArgument);
  EXPECT_EQ(send, nullptr);
  EXPECT_EQ(gOps->test(nullptr, nullptr, nullptr), weftInvalidArgument);
  EXPECT_EQ(gOps->closeSend(nullptr), weftSuccess);
}

TEST_F(TcpPlugin, ConnectionRefusedIsAnError) {
  // A handle of a listener that closed: refused, retried briefly, then an error. (Its own token: should a
  // parallel test's listener get the port meanwhile, that one refuses the connection.)
  constexpr uint64_t kOtherToken = 0xfeedfacecafebeefULL;
  unsigned char handle[WEFT_NET_HANDLE_BYTES];
  void* l = nullptr;
  ASSERT_EQ(gOps->listen(gCtx, kOtherToken, handle, &l), weftSuccess);
  ASSERT_EQ(gOps->closeListen(l), weftSuccess);
  void* send = nullptr;
  weftResult_t res = weftSuccess;
  auto deadline = Clock::now() + 30s;
  while (res == weftSuccess && send == nullptr && Clock::now() < deadline) {
    res = gOps->connect(gCtx, handle, kOtherToken, 1, &send);
    gOps->waitReady(gCtx, 10000);
  }
  EXPECT_EQ(res, weftRemoteError);
  EXPECT_EQ(send, nullptr);
}

TEST(TcpInterfaceSpec, MatchesLikeNcclSocketIfname) {
  using weft::tcp::interfaceMatches;
  EXPECT_TRUE(interfaceMatches("eth", "eth0"));
  EXPECT_TRUE(interfaceMatches("ib,eth", "eth1"));
  EXPECT_FALSE(interfaceMatches("ib,eth", "lo"));
  EXPECT_FALSE(interfaceMatches("=eth", "eth0"));
  EXPECT_TRUE(interfaceMatches("=eth0,lo", "eth0"));
  EXPECT_FALSE(interfaceMatches("^docker,lo", "docker0"));
  EXPECT_FALSE(interfaceMatches("^docker,lo", "lo"));
  EXPECT_TRUE(interfaceMatches("^docker,lo", "eth0"));
  EXPECT_FALSE(interfaceMatches("^=eth0", "eth0"));
  EXPECT_TRUE(interfaceMatches("^=eth0", "eth01"));
}

TEST(TcpInterfaceSpec, SelectsLoopbackByName) {
  weft::tcp::Interface iface;
  std::string error;
  ASSERT_TRUE(weft::tcp::selectInterface("lo", AF_INET, &iface, &error)) << error;
  EXPECT_EQ(iface.name, "lo");
  EXPECT_TRUE(iface.loopback);
  EXPECT_EQ(weft::tcp::formatAddress(iface.addr, false), "127.0.0.1");
  EXPECT_FALSE(weft::tcp::selectInterface("=no-such-interface0", AF_UNSPEC, &iface, &error));
  EXPECT_NE(error.find("no-such-interface0"), std::string::npos);
}

// init with other settings (each its own context).
class TcpPluginInit : public ::testing::Test {
 protected:
  void SetUp() override {
    loadTcpPlugin();
    ASSERT_NE(gPlugin, nullptr);
  }
  void TearDown() override {
    setenv("WEFT_SOCKET_IFNAME", "lo", 1);
    unsetenv("WEFT_SOCKET_FAMILY");
    unsetenv("WEFT_SOCKET_BUFFER");
  }
};

TEST_F(TcpPluginInit, NoMatchingInterfaceFails) {
  setenv("WEFT_SOCKET_IFNAME", "=no-such-interface0", 1);
  void* ctx = reinterpret_cast<void*>(1);
  EXPECT_EQ(gPlugin->init(&kHost, &ctx), weftSystemError);
  EXPECT_EQ(ctx, nullptr);
}

TEST_F(TcpPluginInit, BadSettingsFail) {
  void* ctx = nullptr;
  setenv("WEFT_SOCKET_IFNAME", "lo", 1);
  setenv("WEFT_SOCKET_BUFFER", "lots", 1);
  EXPECT_EQ(gPlugin->init(&kHost, &ctx), weftInvalidArgument);
  unsetenv("WEFT_SOCKET_BUFFER");
  setenv("WEFT_SOCKET_FAMILY", "AF_UNIX", 1);
  EXPECT_EQ(gPlugin->init(&kHost, &ctx), weftInvalidArgument);
}

TEST_F(TcpPluginInit, DefaultInterfaceWorks) {
  unsetenv("WEFT_SOCKET_IFNAME");
  setenv("WEFT_SOCKET_BUFFER", "1M", 1);
  void* ctx = nullptr;
  ASSERT_EQ(gPlugin->init(&kHost, &ctx), weftSuccess);
  EXPECT_TRUE(logContains("using interface"));
  EXPECT_EQ(gPlugin->finalize(ctx), weftSuccess);
}

// Small socket buffers: sends and receives stop in the middle of pieces, again and again.
TEST_F(TcpPluginInit, VecRoundTripSmallSocketBuffers) {
  ASSERT_NE(gVec, nullptr);
  setenv("WEFT_SOCKET_BUFFER", "32K", 1);
  void* ctx = nullptr;
  ASSERT_EQ(gPlugin->init(&kHost, &ctx), weftSuccess);
  unsigned char handle[WEFT_NET_HANDLE_BYTES];
  void* l = nullptr;
  ASSERT_EQ(gOps->listen(ctx, kToken, handle, &l), weftSuccess);
  Pair p = connectPair(ctx, l, handle, kToken, 3);
  ASSERT_NE(p.send, nullptr);
  ASSERT_NE(p.recv, nullptr);
  vecRoundTrip(ctx, p, 3, 120);
  closePair(p);
  EXPECT_EQ(gOps->closeListen(l), weftSuccess);
  EXPECT_EQ(gPlugin->finalize(ctx), weftSuccess);
}

TEST_F(TcpPluginInit, ExactNameAndIpv6) {
  setenv("WEFT_SOCKET_IFNAME", "=lo", 1);
  setenv("WEFT_SOCKET_FAMILY", "AF_INET6", 1);
  void* ctx = nullptr;
  if (gPlugin->init(&kHost, &ctx) != weftSuccess) GTEST_SKIP() << "no IPv6 on lo";
  unsigned char handle[WEFT_NET_HANDLE_BYTES];
  void* l = nullptr;
  ASSERT_EQ(gOps->listen(ctx, kToken, handle, &l), weftSuccess);
  sockaddr_storage addr{};
  socklen_t len = 0;
  ASSERT_TRUE(weft::tcp::decodeHandle(handle, &addr, &len));
  EXPECT_EQ(addr.ss_family, AF_INET6);
  Pair p = connectPair(ctx, l, handle, kToken, 3);
  ASSERT_NE(p.send, nullptr);
  ASSERT_NE(p.recv, nullptr);
  std::vector<size_t> sizes = {0, 1, 4099, size_t{1} << 20};
  roundTrip(ctx, p, sizes, 0, Completion::kAnyOrder);
  closePair(p);
  EXPECT_EQ(gOps->closeListen(l), weftSuccess);
  EXPECT_EQ(gPlugin->finalize(ctx), weftSuccess);
}

}  // namespace
