// One socket both ways (weftTransportPairOps_v1): two "ranks", each a plugin context of its own with its own
// listener, connect to each other with connectPaired, as core's Connections does. What is checked: the pair
// shares one socket when both connect, a one-way connect still gets through, different pair keys or
// listeners never share, messages cross intact both ways at once, and closing leaves no descriptor behind.
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "transport_test_support.h"
#include "weft/plugin.h"

namespace {

using namespace weft_test;

const weftTransportPairOps_v1* gPair = nullptr;

// The socket inodes this process holds: one per socket, however many descriptors refer to it.
std::multiset<std::string> socketDescriptors() {
  std::multiset<std::string> sockets;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return sockets;
  while (dirent* entry = readdir(dir)) {
    char target[256] = {};
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
    if (n > 0 && std::strncmp(target, "socket:", 7) == 0) sockets.insert(target);
  }
  closedir(dir);
  return sockets;
}

size_t distinct(const std::multiset<std::string>& items) {
  return std::set<std::string>(items.begin(), items.end()).size();
}

// One side: a context and a listener whose handle the other side connects to.
struct Rank {
  void* ctx = nullptr;
  void* listener = nullptr;
  unsigned char handle[WEFT_NET_HANDLE_BYTES] = {};
  void* send = nullptr;
  void* recv = nullptr;
  uint64_t acceptedId = 0;
};

class TcpPairing : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("WEFT_SOCKET_IFNAME", "lo", 1);
    loadPlugin(WEFT_TCP_PLUGIN_PATH);
    ASSERT_NE(gLib, nullptr);
    gPair = static_cast<const weftTransportPairOps_v1*>(dlsym(gLib, WEFT_TRANSPORT_PAIR_SYMBOL_V1));
  }

  void SetUp() override {
    ASSERT_NE(gPair, nullptr) << "the tcp plugin exports no " WEFT_TRANSPORT_PAIR_SYMBOL_V1;
    ASSERT_EQ(gPair->abiVersion, 1U);
    before_ = socketDescriptors();
    for (Rank* r : {&a_, &b_}) {
      ASSERT_EQ(gPlugin->init(&kHost, &r->ctx), weftSuccess);
      ASSERT_EQ(gOps->listen(r->ctx, kToken, r->handle, &r->listener), weftSuccess);
    }
    clearLog();
  }

  void TearDown() override {
    for (Rank* r : {&a_, &b_}) {
      if (r->send != nullptr) {
        EXPECT_EQ(gOps->closeSend(r->send), weftSuccess);
      }
      if (r->recv != nullptr) {
        EXPECT_EQ(gOps->closeRecv(r->recv), weftSuccess);
      }
      EXPECT_EQ(gOps->closeListen(r->listener), weftSuccess);
      EXPECT_EQ(gPlugin->finalize(r->ctx), weftSuccess);
    }
    EXPECT_EQ(socketDescriptors(), before_) << "descriptors left open";
  }

  // Drives `from`'s paired connect to `to` (when wanted) and `to`'s accept until both are made.
  static void connectAndAccept(Rank& from, Rank& to, uint64_t id, uint64_t pairKey) {
    auto deadline = Clock::now() + std::chrono::seconds(10);
    while ((from.send == nullptr || to.recv == nullptr) && Clock::now() < deadline) {
      if (from.send == nullptr) {
        ASSERT_EQ(gPair->connectPaired(from.ctx, to.handle, kToken, id, from.listener, pairKey, &from.send),
                  weftSuccess);
      }
      if (to.recv == nullptr) {
        ASSERT_EQ(gOps->accept(to.listener, &to.recv, &to.acceptedId), weftSuccess);
      }
      gOps->waitReady(from.ctx, 100);
    }
    ASSERT_NE(from.send, nullptr);
    ASSERT_NE(to.recv, nullptr);
  }

  // Both ranks connect to each other. The side whose handle sorts lower opens the pair's socket; it goes
  // first here, so that the other finds its offer however slowly this thread runs (when both connect at
  // once the other waits up to 5 ms for it, which the collectives over tcp exercise).
  void connectBothWays(uint64_t keyA, uint64_t keyB) {
    const bool aLower = std::memcmp(a_.handle, b_.handle, WEFT_NET_HANDLE_BYTES) < 0;
    if (aLower) connectAndAccept(a_, b_, 0xa0, keyA);
    connectAndAccept(b_, a_, 0xb0, keyB);
    if (!aLower) connectAndAccept(a_, b_, 0xa0, keyA);
    EXPECT_EQ(a_.acceptedId, 0xb0U);
    EXPECT_EQ(b_.acceptedId, 0xa0U);
  }

  // Messages of several sizes both ways at once, each side sending before it receives.
  void exchange() {
    for (size_t size : {size_t{0}, size_t{8}, size_t{4096}, size_t{3} << 20}) {
      std::vector<unsigned char> fromA = makeMessage(1, size), fromB = makeMessage(2, size);
      std::vector<unsigned char> atA(size + 1), atB(size + 1);
      void *sa = nullptr, *sb = nullptr, *ra = nullptr, *rb = nullptr;
      ASSERT_EQ(gOps->isend(a_.send, fromA.data(), size, 5, nullptr, &sa), weftSuccess);
      ASSERT_EQ(gOps->isend(b_.send, fromB.data(), size, 6, nullptr, &sb), weftSuccess);
      ASSERT_EQ(gOps->irecv(a_.recv, atA.data(), atA.size(), 6, nullptr, &ra), weftSuccess);
      ASSERT_EQ(gOps->irecv(b_.recv, atB.data(), atB.size(), 5, nullptr, &rb), weftSuccess);
      auto deadline = Clock::now() + kDeadline;
      int done[4] = {0, 0, 0, 0};
      size_t got[4] = {0, 0, 0, 0};
      void* requests[4] = {sa, sb, ra, rb};
      while (!(done[0] && done[1] && done[2] && done[3]) && Clock::now() < deadline) {
        for (int i = 0; i < 4; ++i) {
          if (!done[i]) {
            ASSERT_EQ(gOps->test(requests[i], &done[i], &got[i]), weftSuccess) << "request " << i;
          }
        }
      }
      ASSERT_TRUE(done[0] && done[1] && done[2] && done[3]) << size << " B not through within the deadline";
      EXPECT_EQ(got[2], size);
      EXPECT_EQ(got[3], size);
      EXPECT_TRUE(checkMessage(2, atA.data(), size)) << size << " B from b to a";
      EXPECT_TRUE(checkMessage(1, atB.data(), size)) << size << " B from a to b";
    }
  }

  size_t newSockets() const {
    std::multiset<std::string> now = socketDescriptors();
    return distinct(now) - distinct(before_);
  }

  std::multiset<std::string> before_;
  Rank a_, b_;
};

// Two listeners and one socket with its two ends: four sockets, where unpaired connections make six.
TEST_F(TcpPairing, BothWaysShareOneSocket) {
  connectBothWays(3, 3);
  EXPECT_EQ(newSockets(), 4U);
  EXPECT_TRUE(logContains("on the socket of its connection to this side"));
  exchange();
}

TEST_F(TcpPairing, DifferentPairKeysDoNotShare) {
  connectBothWays(3, 4);
  EXPECT_EQ(newSockets(), 6U);
  EXPECT_FALSE(logContains("on the socket of its connection to this side"));
  exchange();
}

// Only one side connects (a ring of 3 or more): it gets through whichever side it is, the one whose handle
// sorts higher after waiting for an offer that does not come.
TEST_F(TcpPairing, OneWayConnectGetsThrough) {
  connectAndAccept(a_, b_, 0xa0, 3);
  EXPECT_EQ(b_.acceptedId, 0xa0U);
  connectAndAccept(b_, a_, 0xb0, 9);  // another key: this one does not share a's socket either
  EXPECT_EQ(a_.acceptedId, 0xb0U);
  exchange();
}

// A plain connect one way and a paired one the other way.
TEST_F(TcpPairing, PlainAndPairedConnectsMix) {
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while ((a_.send == nullptr || b_.recv == nullptr) && Clock::now() < deadline) {
    if (a_.send == nullptr) {
      ASSERT_EQ(gOps->connect(a_.ctx, b_.handle, kToken, 0xa0, &a_.send), weftSuccess);
    }
    if (b_.recv == nullptr) {
      ASSERT_EQ(gOps->accept(b_.listener, &b_.recv, &b_.acceptedId), weftSuccess);
    }
    gOps->waitReady(a_.ctx, 100);
  }
  ASSERT_NE(b_.recv, nullptr);
  connectAndAccept(b_, a_, 0xb0, 3);
  exchange();
}

// WEFT_SOCKET_PAIR=0: connectPaired connects as connect does, a socket per direction.
class TcpPairingOff : public TcpPairing {
 protected:
  void SetUp() override {
    setenv("WEFT_SOCKET_PAIR", "0", 1);
    TcpPairing::SetUp();
  }
  void TearDown() override {
    unsetenv("WEFT_SOCKET_PAIR");
    TcpPairing::TearDown();
  }
};

TEST_F(TcpPairingOff, EachDirectionHasItsSocket) {
  connectBothWays(3, 3);
  EXPECT_EQ(newSockets(), 6U);
  exchange();
}

TEST_F(TcpPairing, BadArguments) {
  void* send = reinterpret_cast<void*>(1);
  EXPECT_EQ(gPair->connectPaired(a_.ctx, b_.handle, kToken, 1, nullptr, 3, &send), weftInvalidArgument);
  EXPECT_EQ(gPair->connectPaired(nullptr, b_.handle, kToken, 1, a_.listener, 3, &send), weftInvalidArgument);
  EXPECT_EQ(gPair->connectPaired(a_.ctx, nullptr, kToken, 1, a_.listener, 3, &send), weftInvalidArgument);
  // b's listener belongs to b's context, not a's.
  EXPECT_EQ(gPair->connectPaired(a_.ctx, b_.handle, kToken, 1, b_.listener, 3, &send), weftInvalidArgument);
  EXPECT_EQ(send, nullptr);
}

}  // namespace
