// Tests of the shm transport plugin through its C ABI: the built shared object is dlopen'ed as the core does.
// Most tests run twice: with CMA (large messages read by process_vm_readv) and with WEFT_SHM_CMA=0 (all
// bytes through the ring). Cross-process tests fork; every wait has a deadline and every child an alarm().
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shm_ring.h"
#include "shm_wire.h"
#include "transport_test_support.h"
#include "vec_test_support.h"
#include "weft/plugin.h"

namespace {

using namespace std::chrono_literals;
using namespace weft_test;

// shm completes the receives of a connection in the order they were posted; recvAll checks it.
constexpr Completion kOrder = Completion::kPostOrder;

const std::vector<size_t> kRoundTripSizes = {
    0, 1, 4099, size_t{64} << 10, (size_t{64} << 10) + 1, size_t{1} << 20, size_t{64} << 20, 17, 0};

// The plugin's memfds in /proc/self/fd and /proc/self/maps.
int countOurMemfds() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(dir)) {
      char target[256] = {};
      std::string path = std::string("/proc/self/fd/") + e->d_name;
      ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
      if (n > 0 && std::string(target, static_cast<size_t>(n)).find("memfd:weft-shm") != std::string::npos)
        ++count;
    }
    closedir(dir);
  }
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:weft-shm") != std::string::npos) ++count;
  }
  return count;
}

std::set<std::string> devShmEntries() {
  std::set<std::string> names;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir)) names.insert(e->d_name);
    closedir(dir);
  }
  return names;
}

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A context per test (settings are read at init), a listener, and the pairs a test made.
class ShmTest : public TransportTest {
 protected:
  void SetUp() override {
    loadPlugin(WEFT_SHM_PLUGIN_PATH);
    ASSERT_NE(gPlugin, nullptr);
    loadVecOps();
    clearLog();
    ASSERT_EQ(gPlugin->init(&kHost, &ctx_), weftSuccess);
    listenOn(ctx_);
  }

  void TearDown() override {
    closeAll();
    if (ctx_ != nullptr) {
      EXPECT_EQ(gPlugin->finalize(ctx_), weftSuccess);
    }
    unsetenv("WEFT_SHM_CMA");
    unsetenv("WEFT_SHM_RING_BYTES");
  }

  void* ctx_ = nullptr;
};

// The same tests with and without CMA.
class ShmPath : public ShmTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    setenv("WEFT_SHM_CMA", GetParam() ? "1" : "0", 1);
    ShmTest::SetUp();
  }
  bool cma() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Paths, ShmPath, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Cma" : "Copy"; });

TEST_F(ShmTest, EntryTable) {
  EXPECT_EQ(gPlugin->abiVersion, static_cast<unsigned>(WEFT_PLUGIN_ABI_VERSION));
  EXPECT_STREQ(gPlugin->name, "shm");
  EXPECT_EQ(gPlugin->kind, weftPluginTransport);
  ASSERT_NE(gOps, nullptr);
  EXPECT_NE(gPlugin->backend, nullptr);  // the node backend: tests/plugins/shm/test_shm_node.cpp
  weftTransportProps_v1 props{};
  ASSERT_EQ(gPlugin->getProperties(ctx_, &props), weftSuccess);
  EXPECT_STREQ(props.name, "shm");
  EXPECT_EQ(props.reach, weftReachSameHost);
  EXPECT_GT(props.bandwidthGBps, 0.0);
  EXPECT_GT(props.latencyUs, 0.0);
  void* mhandle = reinterpret_cast<void*>(1);
  char buf[8];
  EXPECT_EQ(gOps->regMem(nullptr, buf, sizeof(buf), &mhandle), weftSuccess);
  EXPECT_EQ(mhandle, nullptr);
  EXPECT_EQ(gOps->deregMem(nullptr, mhandle), weftSuccess);
}

TEST_F(ShmTest, HandleHoldsAbstractNameAndPid) {
  weft::shm::Handle h;
  ASSERT_TRUE(weft::shm::decodeHandle(handle_, &h));
  EXPECT_EQ(h.pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(h.name.rfind("weft-shm-", 0), 0u);
  EXPECT_EQ(h.name.size(), 9u + 32u);
  // A second listener gets another random name.
  unsigned char other[WEFT_NET_HANDLE_BYTES];
  void* l = nullptr;
  ASSERT_EQ(gOps->listen(ctx_, kToken, other, &l), weftSuccess);
  weft::shm::Handle h2;
  ASSERT_TRUE(weft::shm::decodeHandle(other, &h2));
  EXPECT_NE(h.name, h2.name);
  EXPECT_EQ(gOps->closeListen(l), weftSuccess);
}

TEST_F(ShmTest, ConnectAcceptCarriesConnectorId) {
  Pair& a = newPair(0x1234500000007ULL);
  EXPECT_EQ(a.acceptedId, 0x1234500000007ULL);
  Pair& b = newPair(42);
  EXPECT_EQ(b.acceptedId, 42u);
}

TEST_F(ShmTest, WrongTokenRefusedLaterCorrectAccepted) {
  // The connector cannot tell at once: connect completes when the hello is sent, but the acceptor never
  // returns the connection.
  void* bad = nullptr;
  void* recv = nullptr;
  uint64_t id = 0;
  auto deadline = Clock::now() + 10s;
  while (bad == nullptr && Clock::now() < deadline) {
    ASSERT_EQ(gOps->connect(ctx_, handle_, kToken ^ 1, 99, &bad), weftSuccess);
    ASSERT_EQ(gOps->accept(listen_, &recv, &id), weftSuccess);
    ASSERT_EQ(recv, nullptr);
  }
  ASSERT_NE(bad, nullptr);
  auto until = Clock::now() + 200ms;
  while (Clock::now() < until) {
    ASSERT_EQ(gOps->accept(listen_, &recv, &id), weftSuccess);
    ASSERT_EQ(recv, nullptr);
    gOps->waitReady(ctx_, 10000);
  }
  EXPECT_TRUE(logContains("wrong job token"));

  Pair& good = newPair(7);
  EXPECT_EQ(good.acceptedId, 7u);

  // Sends on the refused connection fail soon (the acceptor closed it): a large one at once (it needs the
  // reply), a small one when the peer check notices.
  std::vector<unsigned char> big(size_t{1} << 20, 1);
  void* r = nullptr;
  ASSERT_EQ(gOps->isend(bad, big.data(), big.size(), 0, nullptr, &r), weftSuccess);
  size_t size = 0;
  auto start = Clock::now();
  EXPECT_EQ(waitRequest(ctx_, r, &size, 10s), weftRemoteError);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_TRUE(logContains("before accepting it"));
  char byte = 1;
  EXPECT_EQ(gOps->isend(bad, &byte, 1, 0, nullptr, &r), weftRemoteError);
  EXPECT_EQ(gOps->closeSend(bad), weftSuccess);
}

// Speaks the handshake over a raw socket: garbage, a hello without fds and a hello whose segment is not
// sealed are refused (and their fds closed); the plugin's own connection after them is accepted.
TEST_F(ShmTest, RawHellosRefused) {
  weft::shm::Handle h;
  ASSERT_TRUE(weft::shm::decodeHandle(handle_, &h));
  auto rawConnect = [&] {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, h.name.data(), h.name.size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + h.name.size());
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
    return fd;
  };
  auto sendFds = [](int fd, const void* data, size_t bytes, const int* fds, int nfds) {
    iovec iov{const_cast<void*>(data), bytes};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 2)] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (nfds > 0) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<size_t>(nfds));
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<size_t>(nfds));
      std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<size_t>(nfds));
    }
    return sendmsg(fd, &msg, MSG_NOSIGNAL);
  };
  int memfdsBefore = countOurMemfds();

  int garbage = rawConnect();
  unsigned char junk[weft::shm::kHelloBytes];
  std::memset(junk, 0x5a, sizeof(junk));
  ASSERT_EQ(sendFds(garbage, junk, sizeof(junk), nullptr, 0), static_cast<ssize_t>(sizeof(junk)));

  weft::shm::Hello hello;
  hello.jobToken = kToken;
  hello.connectorId = 5;
  hello.pid = static_cast<uint32_t>(getpid());
  hello.ringBytes = weft::shm::kMinRingBytes;
  unsigned char bytes[weft::shm::kHelloBytes];
  weft::shm::encodeHello(hello, bytes);
  int noFds = rawConnect();
  ASSERT_EQ(sendFds(noFds, bytes, sizeof(bytes), nullptr, 0), static_cast<ssize_t>(sizeof(bytes)));

  // An unsealed segment of the right size: a peer could shrink it under the mapping and fault the acceptor.
  int unsealed = rawConnect();
  int seg = memfd_create("weft-shm-test-unsealed", MFD_CLOEXEC);
  ASSERT_GE(seg, 0);
  ASSERT_EQ(ftruncate(seg, static_cast<off_t>(weft::shm::segmentBytes(weft::shm::kMinRingBytes))), 0);
  int bell = memfd_create("weft-shm-test-bell", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(bell, 4096), 0);
  int fds[2] = {seg, bell};
  ASSERT_EQ(sendFds(unsealed, bytes, sizeof(bytes), fds, 2), static_cast<ssize_t>(sizeof(bytes)));
  close(seg);
  close(bell);

  void* recv = nullptr;
  uint64_t id = 0;
  auto until = Clock::now() + 300ms;
  while (Clock::now() < until) {
    ASSERT_EQ(gOps->accept(listen_, &recv, &id), weftSuccess);
    ASSERT_EQ(recv, nullptr);
    gOps->waitReady(ctx_, 10000);
  }
  EXPECT_TRUE(logContains("not a weft shm hello"));
  EXPECT_TRUE(logContains("bad hello (0 fds"));
  EXPECT_TRUE(logContains("not sealed against shrinking"));
  // The refused connections are closed, and the fds they brought with them too.
  char c;
  for (int fd : {garbage, noFds, unsealed}) {
    EXPECT_EQ(::recv(fd, &c, 1, 0), 0);
    close(fd);
  }
  EXPECT_EQ(countOurMemfds(), memfdsBefore);

  Pair& p = newPair(8);
  EXPECT_EQ(p.acceptedId, 8u);
}

TEST_P(ShmPath, RoundTripSizesTwoThreads) {
  Pair& p = newPair();
  std::vector<size_t> sizes;
  for (int round = 0; round < 2; ++round)
    sizes.insert(sizes.end(), kRoundTripSizes.begin(), kRoundTripSizes.end());
  roundTrip(ctx_, p, sizes, 3, kOrder);
  EXPECT_EQ(logContains("large messages by CMA"), cma());
  EXPECT_EQ(logContains("CMA not available (WEFT_SHM_CMA=0): copying through the segment"), !cma());
}

TEST_P(ShmPath, ManySmallMessagesInFlight) {
  Pair& p = newPair();
  std::vector<size_t> sizes;
  for (size_t m = 0; m < 3000; ++m) sizes.push_back((m * 37) % 5000);
  roundTrip(ctx_, p, sizes, 0, kOrder);
}

// Mixed sizes in flight, posted before the receiver is accepted: small ones wait in the ring, the first large
// one waits for the acceptor's reply.
TEST_P(ShmPath, MixedSizesPostedBeforeAccept) {
  void* send = connectFrom(ctx_, handle_, 3);
  ASSERT_NE(send, nullptr);
  std::vector<size_t> sizes;
  for (size_t m = 0; m < 300; ++m) sizes.push_back(m % 10 == 9 ? (size_t{200} << 10) + m : (m * 7919) % 70000);
  std::thread sender([&] { sendAll(ctx_, send, sizes, 1); });
  std::this_thread::sleep_for(50ms);
  uint64_t id = 0;
  void* recv = acceptFrom(ctx_, listen_, &id);
  ASSERT_NE(recv, nullptr);
  recvAll(ctx_, recv, sizes, 1, kOrder);
  sender.join();
  EXPECT_EQ(gOps->closeSend(send), weftSuccess);
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
}

// Two connections used by two threads at the same time, each thread sending on one and receiving on the other,
// while a third thread calls waitReady.
TEST_P(ShmPath, TwoConnectionsTwoThreads) {
  Pair& a = newPair(1);
  Pair& b = newPair(2);
  if (a.acceptedId != 1) std::swap(a.recv, b.recv);
  std::vector<size_t> sizes;
  for (size_t m = 0; m < 200; ++m) sizes.push_back((m * 7919) % 300000);
  crossTraffic(ctx_, a, b, sizes, kOrder);
}

// The sender is another process with its own plugin context: CMA reads another address space.
TEST_P(ShmPath, RoundTripForkedSender) {
  std::vector<size_t> sizes = kRoundTripSizes;
  pid_t pid = forkSender(handle_, 77, [&](void* ctx, void* send) { sendAll(ctx, send, sizes, 5); });
  ASSERT_GT(pid, 0);
  uint64_t id = 0;
  void* recv = acceptFrom(ctx_, listen_, &id);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(id, 77u);
  recvAll(ctx_, recv, sizes, 5, kOrder);
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
  EXPECT_EQ(reap(pid), 0);
  EXPECT_EQ(logContains("large messages by CMA"), cma());
}

// Many messages between two processes, the receiver forked this time (it reads its parent's memory by CMA,
// which Yama's ptrace_scope 1 would refuse but for allowPeersToRead), each side's waits sleeping in
// waitReady; then the sender closes and the receiver still gets what was in the ring.
TEST_P(ShmPath, ForkedReceiverThenSenderCloses) {
  std::vector<size_t> sizes;
  for (size_t m = 0; m < 400; ++m) sizes.push_back(m % 50 == 0 ? (size_t{3} << 20) + m : (m * 131) % 9000);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  std::fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(120);
    close(ready[0]);
    void* ctx = nullptr;
    if (gPlugin->init(&kHost, &ctx) != weftSuccess) _exit(2);
    unsigned char handle[WEFT_NET_HANDLE_BYTES];
    void* l = nullptr;
    if (gOps->listen(ctx, kToken, handle, &l) != weftSuccess) _exit(3);
    if (write(ready[1], handle, sizeof(handle)) != static_cast<ssize_t>(sizeof(handle))) _exit(4);
    uint64_t id = 0;
    void* recv = acceptFrom(ctx, l, &id);
    if (recv == nullptr) _exit(6);
    recvAll(ctx, recv, sizes, 9, kOrder);
    // What the sender left in the ring before it closed.
    std::this_thread::sleep_for(300ms);
    recvAll(ctx, recv, {5, 60000}, 10, kOrder);
    // Then nothing more comes: a receive fails (the peer closed), it does not hang.
    char byte;
    void* r = nullptr;
    size_t size = 0;
    if (gOps->irecv(recv, &byte, 1, 11, nullptr, &r) != weftSuccess) _exit(7);
    if (waitRequest(ctx, r, &size, 10s) != weftRemoteError) _exit(8);
    // The child read its parent's memory: under Yama's ptrace_scope 1 only because the parent's plugin
    // declared its peers permitted (allowPeersToRead); elsewhere the kernel allows it anyway.
    if (GetParam() && !logContains("large messages by CMA")) _exit(9);
    bool failed = ::testing::Test::HasFailure();
    gOps->closeRecv(recv);
    gOps->closeListen(l);
    gPlugin->finalize(ctx);
    _exit(failed ? 5 : 0);
  }
  close(ready[1]);
  unsigned char handle[WEFT_NET_HANDLE_BYTES];
  ASSERT_EQ(read(ready[0], handle, sizeof(handle)), static_cast<ssize_t>(sizeof(handle)));
  close(ready[0]);
  void* send = connectFrom(ctx_, handle, 1);
  ASSERT_NE(send, nullptr);
  sendAll(ctx_, send, sizes, 9);
  // Both small enough for the ring: done once written, so the close comes before the child reads them.
  sendAll(ctx_, send, {5, 60000}, 10);
  EXPECT_EQ(gOps->closeSend(send), weftSuccess);
  EXPECT_EQ(reap(pid), 0);
}

TEST_P(ShmPath, LongerMessageFailsWithoutOverflow) {
  // Small (in the ring) and large (CMA, or pieces through the ring); each on a fresh connection since a
  // failure leaves the connection unusable.
  for (size_t sent : {size_t{200}, size_t{6} << 20}) {  // 6 MiB: more than the ring holds
    clearLog();
    Pair& p = newPair();
    constexpr size_t kGuard = 64;
    size_t posted = sent / 2;
    std::vector<unsigned char> buf(kGuard + posted + kGuard, 0xa5);
    std::vector<unsigned char> msg = makeMessage(0, sent);
    void* rr = nullptr;
    void* sr = nullptr;
    ASSERT_EQ(gOps->irecv(p.recv, buf.data() + kGuard, posted, 4, nullptr, &rr), weftSuccess);
    ASSERT_EQ(gOps->isend(p.send, msg.data(), msg.size(), 4, nullptr, &sr), weftSuccess);
    size_t size = 0;
    EXPECT_EQ(waitRequest(ctx_, rr, &size, 10s), weftRemoteError);
    for (unsigned char c : buf) ASSERT_EQ(c, 0xa5);
    EXPECT_TRUE(logContains("message of " + std::to_string(sent) + " bytes for a receive of " +
                            std::to_string(posted) + " bytes"));
    // The sender learns it too unless its message had been fully written into the ring.
    weftResult_t sendResult = waitRequest(ctx_, sr, &size, 10s);
    if (sent > (size_t{64} << 10)) {
      EXPECT_EQ(sendResult, weftRemoteError);
    } else {
      EXPECT_EQ(sendResult, weftSuccess);
    }
    // The connection is unusable afterwards: later receives fail at once.
    EXPECT_EQ(gOps->irecv(p.recv, buf.data(), 1, 4, nullptr, &rr), weftRemoteError);
  }
}

TEST_P(ShmPath, TagMismatchFails) {
  for (size_t len : {size_t{4}, size_t{1} << 20}) {
    clearLog();
    Pair& p = newPair();
    std::vector<unsigned char> out = makeMessage(1, len);
    std::vector<unsigned char> in(len, 0);
    void* sr = nullptr;
    void* rr = nullptr;
    ASSERT_EQ(gOps->isend(p.send, out.data(), len, 1, nullptr, &sr), weftSuccess);
    ASSERT_EQ(gOps->irecv(p.recv, in.data(), len, 2, nullptr, &rr), weftSuccess);
    size_t size = 0;
    EXPECT_EQ(waitRequest(ctx_, rr, &size, 10s), weftRemoteError);
    EXPECT_TRUE(logContains("tag mismatch: message with tag 1 for a receive with tag 2"));
    EXPECT_EQ(in, std::vector<unsigned char>(len, 0));
    weftResult_t sendResult = waitRequest(ctx_, sr, &size, 10s);
    EXPECT_TRUE(sendResult == weftSuccess || sendResult == weftRemoteError);
  }
}

TEST_P(ShmPath, ShorterMessageReportsItsSize) {
  Pair& p = newPair();
  std::vector<unsigned char> buf((size_t{1} << 20) + 100, 0xa5);
  for (size_t len : {size_t{10}, size_t{5}, size_t{0}, size_t{100}, size_t{100000}, size_t{1} << 20}) {
    std::vector<unsigned char> msg = makeMessage(len, len);
    std::fill(buf.begin(), buf.end(), 0xa5);
    void* sr = nullptr;
    void* rr = nullptr;
    ASSERT_EQ(gOps->irecv(p.recv, buf.data(), buf.size(), 0, nullptr, &rr), weftSuccess);
    ASSERT_EQ(gOps->isend(p.send, msg.data(), len, 0, nullptr, &sr), weftSuccess);
    size_t size = 999;
    std::thread receiver([&] {
      size_t got = 999;
      EXPECT_EQ(waitRequest(ctx_, rr, &got), weftSuccess);
      EXPECT_EQ(got, len);
    });
    ASSERT_EQ(waitRequest(ctx_, sr, &size), weftSuccess);
    EXPECT_EQ(size, len);
    receiver.join();
    EXPECT_TRUE(checkMessage(len, buf.data(), len));
    for (size_t i = len; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xa5);
  }
}

TEST_F(ShmTest, ZeroLengthWithNullBuffer) {
  Pair& p = newPair();
  void* sr = nullptr;
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, nullptr, 0, 0, nullptr, &rr), weftSuccess);
  ASSERT_EQ(gOps->isend(p.send, nullptr, 0, 0, nullptr, &sr), weftSuccess);
  size_t size = 1;
  EXPECT_EQ(waitRequest(ctx_, sr, &size), weftSuccess);
  EXPECT_EQ(size, 0u);
  size = 1;
  EXPECT_EQ(waitRequest(ctx_, rr, &size), weftSuccess);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(gOps->isend(p.send, nullptr, 1, 0, nullptr, &sr), weftInvalidArgument);
  EXPECT_EQ(gOps->isend(p.recv, nullptr, 0, 0, nullptr, &sr), weftInvalidUsage);
  EXPECT_EQ(gOps->irecv(p.send, nullptr, 0, 0, nullptr, &sr), weftInvalidUsage);
}

TEST_P(ShmPath, ReceiverClosesMidTransfer) {
  Pair& p = newPair();
  std::vector<unsigned char> out(size_t{64} << 20, 1);
  void* sr = nullptr;
  ASSERT_EQ(gOps->isend(p.send, out.data(), out.size(), 0, nullptr, &sr), weftSuccess);
  ASSERT_EQ(gOps->closeRecv(p.recv), weftSuccess);
  p.recv = nullptr;
  size_t size = 0;
  auto start = Clock::now();
  EXPECT_EQ(waitRequest(ctx_, sr, &size, 20s), weftRemoteError);
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST_P(ShmPath, SenderClosesMidTransfer) {
  Pair& p = newPair();
  std::vector<unsigned char> out(size_t{64} << 20, 1);
  std::vector<unsigned char> in(out.size());
  void* sr = nullptr;
  void* rr = nullptr;
  ASSERT_EQ(gOps->isend(p.send, out.data(), out.size(), 0, nullptr, &sr), weftSuccess);
  ASSERT_EQ(gOps->closeSend(p.send), weftSuccess);
  p.send = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, in.data(), in.size(), 0, nullptr, &rr), weftSuccess);
  size_t size = 0;
  auto start = Clock::now();
  EXPECT_EQ(waitRequest(ctx_, rr, &size, 20s), weftRemoteError);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_TRUE(logContains("closed the connection"));
}

// A sender may finish (its messages written into the ring) and close before the receiver accepts: the
// receiver still gets every message, then the end of the stream.
TEST_F(ShmTest, SenderClosedBeforeAccept) {
  void* send = connectFrom(ctx_, handle_, 4);
  ASSERT_NE(send, nullptr);
  std::vector<size_t> sizes = {0, 1, 4099, size_t{64} << 10};
  sendAll(ctx_, send, sizes, 6);
  EXPECT_EQ(gOps->closeSend(send), weftSuccess);
  uint64_t id = 0;
  void* recv = acceptFrom(ctx_, listen_, &id);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(id, 4u);
  recvAll(ctx_, recv, sizes, 6, kOrder);
  char byte;
  void* r = nullptr;
  size_t size = 0;
  ASSERT_EQ(gOps->irecv(recv, &byte, 1, 6, nullptr, &r), weftSuccess);
  EXPECT_EQ(waitRequest(ctx_, r, &size, 10s), weftRemoteError);
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
}

TEST_F(ShmTest, PeerClosedBeforeAnyData) {
  Pair& p = newPair();
  char in[16];
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, in, sizeof(in), 0, nullptr, &rr), weftSuccess);
  ASSERT_EQ(gOps->closeSend(p.send), weftSuccess);
  p.send = nullptr;
  size_t size = 0;
  EXPECT_EQ(waitRequest(ctx_, rr, &size, 20s), weftRemoteError);
}

TEST_F(ShmTest, CloseWithPendingRequests) {
  Pair& p = newPair();
  std::vector<unsigned char> out(size_t{32} << 20, 1);
  char in[16];
  void* r = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, in, sizeof(in), 0, nullptr, &r), weftSuccess);
  ASSERT_EQ(gOps->irecv(p.recv, in, sizeof(in), 0, nullptr, &r), weftSuccess);
  ASSERT_EQ(gOps->isend(p.send, out.data(), out.size(), 0, nullptr, &r), weftSuccess);
  ASSERT_EQ(gOps->isend(p.send, out.data(), out.size(), 0, nullptr, &r), weftSuccess);
}

// The sending process is SIGKILLed in the middle of a 64 MiB message streamed through the ring: it wrote
// what the ring holds, the receiver took part of it, then the sender died.
TEST_F(ShmTest, SenderKilledMidStream) {
  setenv("WEFT_SHM_CMA", "0", 1);  // read by the child's init: this connection copies through the ring
  size_t bytes = size_t{64} << 20;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = forkSender(handle_, 1, [&](void* ctx, void* send) {
    std::vector<unsigned char> out = makeMessage(0, bytes);
    void* r = nullptr;
    if (gOps->isend(send, out.data(), out.size(), 0, nullptr, &r) != weftSuccess) _exit(6);
    // The large message waits for the acceptor's reply; progress until the ring is full.
    int done = 0;
    size_t size = 0;
    for (int i = 0; i < 100; ++i) {
      gOps->test(r, &done, &size);
      gOps->waitReady(ctx, 1000);
    }
    if (write(ready[1], "x", 1) != 1) _exit(9);
    pause();
  });
  ASSERT_GT(pid, 0);
  close(ready[1]);
  uint64_t id = 0;
  void* recv = acceptFrom(ctx_, listen_, &id);
  ASSERT_NE(recv, nullptr);
  char x;
  ASSERT_EQ(read(ready[0], &x, 1), 1);
  close(ready[0]);
  std::vector<unsigned char> in(bytes, 0);
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(recv, in.data(), in.size(), 0, nullptr, &rr), weftSuccess);
  int done = 0;
  size_t size = 0;
  ASSERT_EQ(gOps->test(rr, &done, &size), weftSuccess);
  ASSERT_EQ(done, 0);
  // What the ring held came through it (at least half of it: the rest may still be on its way).
  EXPECT_TRUE(checkMessage(0, in.data(), weft::shm::kDefaultRingBytes / 2));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_EQ(reap(pid), 128 + SIGKILL);
  auto start = Clock::now();
  EXPECT_EQ(waitRequest(ctx_, rr, &size, 20s), weftRemoteError);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_TRUE(logContains("closed the connection or exited"));
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
}

// The sending process is SIGKILLed while its CMA message waits to be read: the read must fail, not read
// whatever now has that pid.
TEST_F(ShmTest, SenderKilledBeforeCmaRead) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  size_t bytes = size_t{8} << 20;
  pid_t pid = forkSender(handle_, 1, [&](void* ctx, void* send) {
    std::vector<unsigned char> small = makeMessage(0, 10), out = makeMessage(1, bytes);
    void* r1 = nullptr;
    void* r2 = nullptr;
    if (gOps->isend(send, small.data(), small.size(), 0, nullptr, &r1) != weftSuccess) _exit(6);
    if (gOps->isend(send, out.data(), out.size(), 0, nullptr, &r2) != weftSuccess) _exit(7);
    size_t size = 0;
    if (waitRequest(ctx, r1, &size) != weftSuccess) _exit(8);
    int done = 0;
    // Progress until the large header is in the ring (it waits for the acceptor's reply).
    for (int i = 0; i < 200; ++i) {
      gOps->test(r2, &done, &size);
      gOps->waitReady(ctx, 1000);
    }
    if (write(ready[1], "x", 1) != 1) _exit(9);
    pause();
  });
  ASSERT_GT(pid, 0);
  close(ready[1]);
  uint64_t id = 0;
  void* recv = acceptFrom(ctx_, listen_, &id);
  ASSERT_NE(recv, nullptr);
  std::vector<unsigned char> small(10), in(bytes, 0);
  void* rr = nullptr;
  size_t size = 0;
  ASSERT_EQ(gOps->irecv(recv, small.data(), small.size(), 0, nullptr, &rr), weftSuccess);
  ASSERT_EQ(waitRequest(ctx_, rr, &size, 20s), weftSuccess);
  char x;
  ASSERT_EQ(read(ready[0], &x, 1), 1);
  close(ready[0]);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_EQ(reap(pid), 128 + SIGKILL);
  auto start = Clock::now();
  ASSERT_EQ(gOps->irecv(recv, in.data(), in.size(), 0, nullptr, &rr), weftSuccess);
  EXPECT_EQ(waitRequest(ctx_, rr, &size, 20s), weftRemoteError);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(in, std::vector<unsigned char>(bytes, 0));
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
}

// The receiving process is SIGKILLed while a 64 MiB send waits on it (for ring space after 4 MiB, or for its
// CMA read).
TEST_P(ShmPath, ReceiverKilledMidTransfer) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  std::fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(120);
    close(ready[0]);
    void* ctx = nullptr;
    if (gPlugin->init(&kHost, &ctx) != weftSuccess) _exit(2);
    unsigned char handle[WEFT_NET_HANDLE_BYTES];
    void* l = nullptr;
    if (gOps->listen(ctx, kToken, handle, &l) != weftSuccess) _exit(3);
    if (write(ready[1], handle, sizeof(handle)) != static_cast<ssize_t>(sizeof(handle))) _exit(4);
    uint64_t id = 0;
    void* recv = acceptFrom(ctx, l, &id);
    if (recv == nullptr) _exit(6);
    // Receives nothing: the sender waits for ring space (or for its CMA read) when the child is killed.
    pause();
  }
  close(ready[1]);
  unsigned char handle[WEFT_NET_HANDLE_BYTES];
  ASSERT_EQ(read(ready[0], handle, sizeof(handle)), static_cast<ssize_t>(sizeof(handle)));
  close(ready[0]);
  void* send = connectFrom(ctx_, handle, 1);
  ASSERT_NE(send, nullptr);
  std::vector<unsigned char> out(size_t{64} << 20, 3);
  void* sr = nullptr;
  ASSERT_EQ(gOps->isend(send, out.data(), out.size(), 0, nullptr, &sr), weftSuccess);
  int done = 0;
  size_t size = 0;
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(gOps->test(sr, &done, &size), weftSuccess);
    ASSERT_EQ(done, 0);
    gOps->waitReady(ctx_, 1000);
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_EQ(reap(pid), 128 + SIGKILL);
  auto start = Clock::now();
  EXPECT_EQ(waitRequest(ctx_, sr, &size, 20s), weftRemoteError);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(gOps->closeSend(send), weftSuccess);
}

TEST_F(ShmTest, WaitReadyHonoursTimeoutAndSleeps) {
  // Nothing pending: the full timeout.
  auto start = Clock::now();
  EXPECT_EQ(gOps->waitReady(ctx_, 50000), weftSuccess);
  auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, 40ms);
  EXPECT_LT(elapsed, 1s);

  start = Clock::now();
  EXPECT_EQ(gOps->waitReady(ctx_, 0), weftSuccess);
  EXPECT_LT(Clock::now() - start, 50ms);

  // A receive pending without data: the timeout again, still asleep.
  Pair& p = newPair();
  char in[8];
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, in, sizeof(in), 0, nullptr, &rr), weftSuccess);
  start = Clock::now();
  double cpu = threadCpuSeconds();
  EXPECT_EQ(gOps->waitReady(ctx_, 200000), weftSuccess);
  elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, 180ms);
  EXPECT_LT(elapsed, 1s);
  EXPECT_LT(threadCpuSeconds() - cpu, 0.05) << "waitReady spins";

  // Data arriving wakes it well before its timeout.
  std::thread sender([&] {
    std::this_thread::sleep_for(50ms);
    void* sr = nullptr;
    size_t size = 0;
    EXPECT_EQ(gOps->isend(p.send, "1234567", 8, 0, nullptr, &sr), weftSuccess);
    EXPECT_EQ(waitRequest(ctx_, sr, &size), weftSuccess);
  });
  start = Clock::now();
  EXPECT_EQ(gOps->waitReady(ctx_, 10000000), weftSuccess);
  EXPECT_LT(Clock::now() - start, 1s);
  sender.join();
  size_t size = 0;
  EXPECT_EQ(waitRequest(ctx_, rr, &size), weftSuccess);
  EXPECT_STREQ(in, "1234567");
}

// Another process's data wakes waitReady through the futex in shared memory, well within its timeout.
TEST_F(ShmTest, WaitReadyWokenByOtherProcess) {
  pid_t pid = forkSender(handle_, 1, [&](void* ctx, void* send) {
    std::this_thread::sleep_for(300ms);
    std::vector<unsigned char> msg = makeMessage(0, 100);
    void* r = nullptr;
    size_t size = 0;
    EXPECT_EQ(gOps->isend(send, msg.data(), msg.size(), 0, nullptr, &r), weftSuccess);
    EXPECT_EQ(waitRequest(ctx, r, &size), weftSuccess);
  });
  ASSERT_GT(pid, 0);
  uint64_t id = 0;
  void* recv = acceptFrom(ctx_, listen_, &id);
  ASSERT_NE(recv, nullptr);
  std::vector<unsigned char> in(100);
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(recv, in.data(), in.size(), 0, nullptr, &rr), weftSuccess);
  int done = 0;
  size_t size = 0;
  ASSERT_EQ(gOps->test(rr, &done, &size), weftSuccess);
  ASSERT_EQ(done, 0);
  auto start = Clock::now();
  EXPECT_EQ(gOps->waitReady(ctx_, 10000000), weftSuccess);
  auto elapsed = Clock::now() - start;
  EXPECT_LT(elapsed, 2s);
  EXPECT_EQ(waitRequest(ctx_, rr, &size, 10s), weftSuccess);
  EXPECT_TRUE(checkMessage(0, in.data(), in.size()));
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
  EXPECT_EQ(reap(pid), 0);
}

// After connections with another process, a SIGKILL and every close, no memfd of ours is open or mapped and
// nothing appeared in /dev/shm.
TEST_F(ShmTest, NothingLeftBehind) {
  std::set<std::string> before = devShmEntries();
  {
    Pair& p = newPair();
    std::vector<size_t> sizes = {1, size_t{1} << 20};
    roundTrip(ctx_, p, sizes, 0, kOrder);
  }
  pid_t pid = forkSender(handle_, 2, [&](void* ctx, void* send) {
    std::vector<unsigned char> out = makeMessage(0, size_t{16} << 20);
    void* r = nullptr;
    gOps->isend(send, out.data(), out.size(), 0, nullptr, &r);
    size_t size = 0;
    waitRequest(ctx, r, &size);
  });
  ASSERT_GT(pid, 0);
  uint64_t id = 0;
  void* recv = acceptFrom(ctx_, listen_, &id);
  ASSERT_NE(recv, nullptr);
  EXPECT_GT(countOurMemfds(), 0);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  reap(pid);
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
  for (Pair& p : pairs_) closePair(p);
  pairs_.clear();
  EXPECT_EQ(gOps->closeListen(listen_), weftSuccess);
  listen_ = nullptr;
  EXPECT_EQ(gPlugin->finalize(ctx_), weftSuccess);
  ctx_ = nullptr;
  EXPECT_EQ(countOurMemfds(), 0);
  for (const std::string& name : devShmEntries()) {
    if (before.count(name) == 0) ADD_FAILURE() << "new in /dev/shm: " << name;
    EXPECT_EQ(name.find("weft"), std::string::npos) << name;
  }
}

// Vectored messages (weftTransportVecOps_v1; vec_test_support.h): inline ones are gathered into the ring
// and scattered out of it piece by piece; CMA ones are read straight from the sender's pieces (their list
// read first from the sender's memory) into the receiver's.

TEST_F(ShmTest, VecEntryTable) { expectVecEntryTable(); }

TEST_P(ShmPath, VecRoundTripRandomLayouts) {
  vecRoundTrips(ctx_, [&]() -> Pair& { return newPair(); });
}

// The sender another process: the receiver reads its list of pieces, then the pieces, from its memory.
TEST_P(ShmPath, VecRoundTripForkedSender) {
  ASSERT_NE(gVec, nullptr);
  pid_t pid = forkSender(handle_, 78, [&](void* ctx, void* send) {
    std::vector<VecMessage> msgs = makeVecMessages(3, 120);
    sendAllVec(ctx, send, msgs, 6);
  });
  ASSERT_GT(pid, 0);
  uint64_t id = 0;
  void* recv = acceptFrom(ctx_, listen_, &id);
  ASSERT_NE(recv, nullptr);
  std::vector<VecMessage> msgs = makeVecMessages(3, 120);
  recvAllVec(ctx_, recv, msgs, 6);
  EXPECT_EQ(gOps->closeRecv(recv), weftSuccess);
  EXPECT_EQ(reap(pid), 0);
}

// Inline messages (checked at the header, the payload never copied out) and, past 64 KiB, a CMA one (whose
// sender then waits for a read that never comes) or one through the ring.
TEST_P(ShmPath, VecLongerMessageFailsWithoutOverflow) {
  ASSERT_NE(gVec, nullptr);
  vecLongerMessageFails(
      ctx_, [&]() -> Pair& { return newPair(); },
      {{{30, 0, 40, 1, 29}, 200}, {{3000, 0, 1, 1999}, 6000}, {{70000, 0, 1, 29999}, 200000, !cma()}});
}

// A sender that changes its list of pieces after isendv (which the ABI forbids) cannot make the receiver
// read more, or other, bytes than its header announced: the list is checked against the header first.
TEST_F(ShmTest, VecSenderListChangedAfterPostIsCaught) {
  ASSERT_NE(gVec, nullptr);
  Pair& p = newPair();
  if (!logContains("large messages by CMA")) GTEST_SKIP() << "CMA is not available here";
  std::vector<unsigned char> a(100000, 1);
  std::vector<unsigned char> b(100000, 2);
  std::vector<unsigned char> in(200000, 0);
  weftTransportIov_v1 iov[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
  void* sr = nullptr;
  void* rr = nullptr;
  ASSERT_EQ(gVec->isendv(p.send, iov, 2, 9, &sr), weftSuccess);
  iov[1].size = 5;
  ASSERT_EQ(gOps->irecv(p.recv, in.data(), in.size(), 9, nullptr, &rr), weftSuccess);
  size_t size = 0;
  EXPECT_EQ(waitRequest(ctx_, rr, &size), weftRemoteError);
  EXPECT_TRUE(logContains("the sender's 2 pieces do not add up to its 200000-byte message (tag 9)"));
  EXPECT_TRUE(std::all_of(in.begin(), in.end(), [](unsigned char c) { return c == 0; }));
}

// A vectored send of more pieces than a receiver reads a list of (kMaxCmaPieces) goes through the ring.
TEST_F(ShmTest, VecMorePiecesThanACmaListGoThroughTheRing) {
  ASSERT_NE(gVec, nullptr);
  Pair& p = newPair();
  const size_t count = size_t{weft::shm::kMaxCmaPieces} + 1;
  std::vector<unsigned char> out = makeMessage(5, count);
  std::vector<weftTransportIov_v1> iov(count);
  for (size_t i = 0; i < count; ++i) iov[i] = {&out[i], 1};
  std::vector<unsigned char> in(count, 0);
  void* sr = nullptr;
  void* rr = nullptr;
  ASSERT_EQ(gOps->irecv(p.recv, in.data(), in.size(), 3, nullptr, &rr), weftSuccess);
  ASSERT_EQ(gVec->isendv(p.send, iov.data(), static_cast<int>(count), 3, &sr), weftSuccess);
  size_t size = 0;
  ASSERT_EQ(waitSendAndRecv(ctx_, sr, rr, &size), weftSuccess);  // 1 MiB: more than the default ring
  EXPECT_EQ(size, count);
  EXPECT_TRUE(checkMessage(5, in.data(), in.size()));
}

TEST_F(ShmTest, VecBadArguments) {
  ASSERT_NE(gVec, nullptr);
  vecBadArguments(ctx_, newPair());
}

TEST_F(ShmTest, BadArguments) {
  unsigned char bogus[WEFT_NET_HANDLE_BYTES] = {};
  void* send = reinterpret_cast<void*>(1);
  EXPECT_EQ(gOps->connect(ctx_, bogus, kToken, 1, &send), weftInvalidArgument);
  EXPECT_EQ(send, nullptr);
  EXPECT_EQ(gOps->test(nullptr, nullptr, nullptr), weftInvalidArgument);
  EXPECT_EQ(gOps->closeSend(nullptr), weftSuccess);
  EXPECT_EQ(gOps->waitReady(nullptr, 0), weftInvalidArgument);
}

TEST_F(ShmTest, ClosedListenerIsAnError) {
  unsigned char handle[WEFT_NET_HANDLE_BYTES];
  void* l = nullptr;
  ASSERT_EQ(gOps->listen(ctx_, kToken, handle, &l), weftSuccess);
  ASSERT_EQ(gOps->closeListen(l), weftSuccess);
  void* send = nullptr;
  EXPECT_EQ(gOps->connect(ctx_, handle, kToken, 1, &send), weftRemoteError);
  EXPECT_EQ(send, nullptr);
  EXPECT_TRUE(logContains("nobody listens there"));
}

// init with other settings (each its own context).
class ShmInit : public ::testing::Test {
 protected:
  void SetUp() override {
    loadPlugin(WEFT_SHM_PLUGIN_PATH);
    ASSERT_NE(gPlugin, nullptr);
    clearLog();
  }
  void TearDown() override {
    unsetenv("WEFT_SHM_CMA");
    unsetenv("WEFT_SHM_RING_BYTES");
  }
};

TEST_F(ShmInit, BadSettingsFail) {
  void* ctx = nullptr;
  setenv("WEFT_SHM_CMA", "maybe", 1);
  EXPECT_EQ(gPlugin->init(&kHost, &ctx), weftInvalidArgument);
  EXPECT_EQ(ctx, nullptr);
  unsetenv("WEFT_SHM_CMA");
  for (const char* bad : {"lots", "1000", "32K", "2G", "-4M"}) {
    setenv("WEFT_SHM_RING_BYTES", bad, 1);
    EXPECT_EQ(gPlugin->init(&kHost, &ctx), weftInvalidArgument) << bad;
  }
}

// Sends `sizes` through a fresh context's connection over the smallest ring (64 KiB) and checks every message.
void roundTripOnSmallestRing(const std::vector<size_t>& sizes) {
  setenv("WEFT_SHM_RING_BYTES", "64K", 1);
  withFreshContextPair([&](void* ctx, Pair& p) { roundTrip(ctx, p, sizes, 0, kOrder); });
}

// The smallest ring: every large message wraps many times, through the ring or by CMA.
TEST_F(ShmInit, SmallRingWraps) {
  std::vector<size_t> sizes;
  for (size_t m = 0; m < 500; ++m) sizes.push_back(m % 25 == 0 ? (size_t{1} << 20) + m : (m * 4099) % 65600);
  for (const char* cma : {"1", "0"}) {
    setenv("WEFT_SHM_CMA", cma, 1);
    roundTripOnSmallestRing(sizes);
  }
}

// Payloads of up to 16 bytes ride in their header's slot, longer ones after it, and the receiver finds each
// slot by its stamp: thousands of messages of 0 to 40 bytes (and some longer) lap the smallest ring dozens of
// times, so that every slot it looks at first holds a stale message of an earlier lap.
TEST_F(ShmInit, SlotPayloadsLapTheRing) {
  std::vector<size_t> sizes;
  for (size_t m = 0; m < 30000; ++m) sizes.push_back(m % 97 == 0 ? 1000 + m : m % 41);
  roundTripOnSmallestRing(sizes);
}

}  // namespace
