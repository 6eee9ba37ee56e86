// Helpers for testing a transport plugin's vectored messages (weftTransportVecOps_v1) through its C ABI:
// messages in random layouts of pieces (empty and 1-byte ones, more pieces than one system call takes), sent
// and received vectored or plain, every byte checked and every byte around the pieces untouched. Shared by the
// tcp and shm plugin tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "transport_test_support.h"
#include "weft/plugin.h"

namespace weft_test {

inline const weftTransportVecOps_v1* gVec = nullptr;  // the loaded plugin's vectored extension, if it has one

// Looks up the vectored extension in the plugin loadPlugin opened (null where it has none).
inline void loadVecOps() {
  if (gLib != nullptr && gVec == nullptr) {
    gVec = static_cast<const weftTransportVecOps_v1*>(dlsym(gLib, WEFT_TRANSPORT_VEC_SYMBOL_V1));
  }
}

inline constexpr unsigned char kUntouched = 0xee;
inline constexpr size_t kGap = 8;

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
inline std::vector<size_t> randomLayout(std::mt19937_64& rng, size_t total, bool many) {
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

inline weftResult_t postSend(void* comm, VecMessage& msg, uint32_t tag, void** request) {
  if (msg.sendVectored) return gVec->isendv(comm, msg.out->iov.data(), msg.out->count(), tag, request);
  return gOps->isend(comm, msg.out->iov[0].data, msg.out->total, tag, nullptr, request);
}

inline weftResult_t postRecv(void* comm, VecMessage& msg, uint32_t tag, void** request) {
  if (msg.recvVectored) return gVec->irecvv(comm, msg.in->iov.data(), msg.in->count(), tag, request);
  return gOps->irecv(comm, msg.in->iov[0].data, msg.in->total, tag, nullptr, request);
}

// Sends every message (all posted at once), checking completion in order.
inline void sendAllVec(void* ctx, void* sendComm, std::vector<VecMessage>& msgs, uint32_t tag) {
  std::vector<void*> reqs(msgs.size(), nullptr);
  for (size_t m = 0; m < msgs.size(); ++m) ASSERT_EQ(postSend(sendComm, msgs[m], tag, &reqs[m]), weftSuccess);
  for (size_t m = 0; m < msgs.size(); ++m) {
    size_t size = 12345;
    ASSERT_EQ(waitRequest(ctx, reqs[m], &size), weftSuccess) << "message " << m;
    EXPECT_EQ(size, msgs[m].length) << "message " << m;
  }
}

// Receives every message (all posted at once), testing the newest first, and checks the bytes.
inline void recvAllVec(void* ctx, void* recvComm, std::vector<VecMessage>& msgs, uint32_t tag) {
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
inline std::vector<VecMessage> makeVecMessages(uint64_t seed, size_t count) {
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

// The plugin exports the extension, with both calls.
inline void expectVecEntryTable() {
  ASSERT_NE(gVec, nullptr) << "no " WEFT_TRANSPORT_VEC_SYMBOL_V1;
  EXPECT_EQ(gVec->abiVersion, 1u);
  EXPECT_NE(gVec->isendv, nullptr);
  EXPECT_NE(gVec->irecvv, nullptr);
}

// All of makeVecMessages(seed, count) in flight at once, the receiver in a thread of its own.
inline void vecRoundTrip(void* ctx, const Pair& p, uint64_t seed, size_t count) {
  std::vector<VecMessage> msgs = makeVecMessages(seed, count);
  std::thread receiver([&] { recvAllVec(ctx, p.recv, msgs, 6); });
  sendAllVec(ctx, p.send, msgs, 6);
  receiver.join();
}

// vecRoundTrip with 300 messages of seeds 1 and 2, each on a new pair from newPair().
template <typename NewPair>
void vecRoundTrips(void* ctx, NewPair newPair) {
  ASSERT_NE(gVec, nullptr);
  for (uint64_t seed : {1, 2}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    vecRoundTrip(ctx, newPair(), seed, 300);
  }
}

// A message longer than the pieces of its irecvv fails, writes nothing, and leaves the connection failed.
struct VecOverflowCase {
  std::vector<size_t> layout;   // the receive's pieces
  size_t sent;                  // the message, longer than their sum
  bool senderCompletes = true;  // false where the sender waits for the receiver to read it (shm's CMA)
};

// One pair per case, from newPair().
template <typename NewPair>
void vecLongerMessageFails(void* ctx, NewPair newPair, const std::vector<VecOverflowCase>& cases) {
  for (const VecOverflowCase& c : cases) {
    Pair& p = newPair();
    Pieces in(c.layout);
    std::vector<unsigned char> msg = makeMessage(0, c.sent);
    void* rr = nullptr;
    void* sr = nullptr;
    ASSERT_EQ(gVec->irecvv(p.recv, in.iov.data(), in.count(), 4, &rr), weftSuccess);
    ASSERT_EQ(gOps->isend(p.send, msg.data(), msg.size(), 4, nullptr, &sr), weftSuccess);
    size_t size = 0;
    if (c.senderCompletes) {
      EXPECT_EQ(waitRequest(ctx, sr, &size), weftSuccess);
    }
    EXPECT_EQ(waitRequest(ctx, rr, &size), weftRemoteError);
    EXPECT_TRUE(in.holds(0, 0));
    std::string expected =
        "message of " + std::to_string(c.sent) + " bytes for a receive of " + std::to_string(in.total) + " bytes";
    EXPECT_TRUE(logContains(expected)) << expected;
    EXPECT_EQ(gVec->irecvv(p.recv, in.iov.data(), in.count(), 4, &rr), weftRemoteError);
  }
}

// Every bad argument of isendv and irecvv is refused without queueing anything; a message then goes through.
inline void vecBadArguments(void* ctx, const Pair& p) {
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
  char in[2] = {};
  weftTransportIov_v1 into[3] = {{nullptr, 0}, {in, 1}, {in + 1, 1}};
  void* sr = nullptr;
  void* rr = nullptr;
  byte = 'x';
  ASSERT_EQ(gVec->irecvv(p.recv, into, 3, 0, &rr), weftSuccess);
  ASSERT_EQ(gVec->isendv(p.send, good, 2, 0, &sr), weftSuccess);
  size_t size = 0;
  EXPECT_EQ(waitRequest(ctx, sr, &size), weftSuccess);
  EXPECT_EQ(size, 1u);
  EXPECT_EQ(waitRequest(ctx, rr, &size), weftSuccess);
  EXPECT_EQ(size, 1u);
  EXPECT_EQ(in[0], 'x');
  EXPECT_EQ(in[1], 0);
}

}  // namespace weft_test
