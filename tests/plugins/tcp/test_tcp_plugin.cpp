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
#include "vec_test_support.h"
#include "weft/plugin.h"

namespace {

using namespace std::chrono_literals;
using namespace weft_test;

void* gCtx = nullptr;

// The plugin, then its vectored extension from the same library (null where it has none).
void loadTcpPlugin() {
  loadPlugin(WEFT_TCP_PLUGIN_PATH);
  loadVecOps();
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

TEST_F(TcpPlugin, VecEntryTable) { expectVecEntryTable(); }

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

// Vectored messages (weftTransportVecOps_v1; vec_test_support.h).

TEST_F(TcpPlugin, VecRoundTripRandomLayouts) {
  vecRoundTrips(gCtx, [&]() -> Pair& { return newPair(); });
}

// A message longer than the pieces of its irecvv fails (small and large receive paths) and writes nothing.
TEST_F(TcpPlugin, VecLongerMessageFailsWithoutOverflow) {
  ASSERT_NE(gVec, nullptr);
  vecLongerMessageFails(gCtx, [&]() -> Pair& { return newPair(); },
                        {{{30, 0, 40, 1, 29}, 200}, {{3000, 0, 1, 1999}, 6000}});
}

TEST_F(TcpPlugin, VecBadArguments) {
  ASSERT_NE(gVec, nullptr);
  vecBadArguments(gCtx, newPair());
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
  unsetenv("WEFT_SOCKET_FAMILY");
  setenv("WEFT_SOCKET_PAIR", "yes", 1);
  EXPECT_EQ(gPlugin->init(&kHost, &ctx), weftInvalidArgument);
  EXPECT_TRUE(logContains("WEFT_SOCKET_PAIR=yes is not 0 or 1"));
  unsetenv("WEFT_SOCKET_PAIR");
  setenv("WEFT_SOCKET_CONGESTION", "cubic,reno", 1);
  EXPECT_EQ(gPlugin->init(&kHost, &ctx), weftInvalidArgument);
  EXPECT_TRUE(logContains("WEFT_SOCKET_CONGESTION=cubic,reno is not auto, host or a congestion control's name"));
  unsetenv("WEFT_SOCKET_CONGESTION");
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
  withFreshContextPair([](void* ctx, Pair& p) { vecRoundTrip(ctx, p, 3, 120); });
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
