// Helpers for testing a transport plugin through its C ABI from a test program: the built shared object is
// dlopen'ed as the core does, with a host that captures the plugin's log. Shared by the tcp and shm plugin
// tests so that both drive their transport the same way (same message patterns, same deadlines).
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "weft/plugin.h"

// Not an anonymous namespace: each test program has one copy of these (inline), shared by its files.
namespace weft_test {

using Clock = std::chrono::steady_clock;

inline constexpr uint64_t kToken = 0x0123456789abcdefULL;
// How long one request, or one batch of them, may take before the test fails instead of hanging.
inline constexpr std::chrono::seconds kDeadline{60};

// The plugin's log: printed (with the pid, for the tests that fork) and kept for logContains.
inline std::mutex gLogMutex;
inline std::vector<std::string> gLog;

inline void testLog(weftLogLevel_t level, const char* plugin, const char* message) {
  std::fprintf(stderr, "[%s:%d:%d] %s\n", plugin, static_cast<int>(level), static_cast<int>(getpid()), message);
  std::lock_guard<std::mutex> lock(gLogMutex);
  gLog.emplace_back(message);
}

inline bool logContains(const std::string& text) {
  std::lock_guard<std::mutex> lock(gLogMutex);
  return std::any_of(gLog.begin(), gLog.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

inline void clearLog() {
  std::lock_guard<std::mutex> lock(gLogMutex);
  gLog.clear();
}

// Settings come from the environment, as in the core: a test sets WEFT_* before init.
inline const char* testGetConfig(const char* name) { return std::getenv(name); }

inline const weftPluginHost_v1 kHost = {WEFT_PLUGIN_ABI_VERSION, testLog, testGetConfig};

inline void* gLib = nullptr;  // the dlopen handle, kept to look up a plugin's optional extensions
inline const weftPlugin_v1_t* gPlugin = nullptr;
inline const weftTransportOps_v1* gOps = nullptr;

// Loads the plugin at path once per process (later calls do nothing); never unloaded, as in the core.
inline void loadPlugin(const char* path) {
  if (gPlugin != nullptr) return;
  gLib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(gLib, nullptr) << dlerror();
  gPlugin = static_cast<const weftPlugin_v1_t*>(dlsym(gLib, WEFT_PLUGIN_SYMBOL_V1));
  ASSERT_NE(gPlugin, nullptr) << dlerror();
  gOps = gPlugin->transport;
}

// Content of byte i of message m.
inline unsigned char pattern(size_t m, size_t i) {
  return static_cast<unsigned char>((i * 131 + m * 7 + (i >> 11)) & 0xff);
}

inline std::vector<unsigned char> makeMessage(size_t m, size_t size) {
  std::vector<unsigned char> v(size);
  for (size_t i = 0; i < size; ++i) v[i] = pattern(m, i);
  return v;
}

inline bool checkMessage(size_t m, const unsigned char* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != pattern(m, i)) return false;
  }
  return true;
}

// Tests r until done, an error or the deadline (weftTimeout).
inline weftResult_t waitRequest(void* ctx, void* r, size_t* size, std::chrono::seconds limit = kDeadline) {
  auto deadline = Clock::now() + limit;
  for (;;) {
    int done = 0;
    weftResult_t res = gOps->test(r, &done, size);
    if (res != weftSuccess || done) return res;
    if (Clock::now() > deadline) return weftTimeout;
    gOps->waitReady(ctx, 1000);
  }
}

// Tests a send and a receive of this thread until both are done, one fails or the deadline passes
// (weftTimeout): a message larger than the sender's ring moves on only while its send is tested too.
inline weftResult_t waitSendAndRecv(void* ctx, void* send, void* recv, size_t* recvSize,
                                    std::chrono::seconds limit = kDeadline) {
  auto deadline = Clock::now() + limit;
  int sent = 0;
  int received = 0;
  for (;;) {
    size_t sentSize = 0;
    if (!sent) {
      if (weftResult_t res = gOps->test(send, &sent, &sentSize); res != weftSuccess) return res;
    }
    if (!received) {
      if (weftResult_t res = gOps->test(recv, &received, recvSize); res != weftSuccess) return res;
    }
    if (sent && received) return weftSuccess;
    if (Clock::now() > deadline) return weftTimeout;
    gOps->waitReady(ctx, 1000);
  }
}

struct Pair {
  void* send = nullptr;
  void* recv = nullptr;
  uint64_t acceptedId = 0;
};

// Connects and accepts one connection, both sides driven from this thread.
inline Pair connectPair(void* ctx, void* listenComm, const unsigned char* handle, uint64_t token, uint64_t id) {
  Pair p;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while ((p.send == nullptr || p.recv == nullptr) && Clock::now() < deadline) {
    if (p.send == nullptr) {
      EXPECT_EQ(gOps->connect(ctx, handle, token, id, &p.send), weftSuccess);
    }
    if (p.recv == nullptr) {
      EXPECT_EQ(gOps->accept(listenComm, &p.recv, &p.acceptedId), weftSuccess);
    }
    if (p.send == nullptr || p.recv == nullptr) gOps->waitReady(ctx, 1000);
  }
  EXPECT_NE(p.send, nullptr);
  EXPECT_NE(p.recv, nullptr);
  return p;
}

// Closes both sides of p that are still open (a test sets a side it closed itself to null).
inline void closePair(Pair& p) {
  if (p.send != nullptr) {
    EXPECT_EQ(gOps->closeSend(p.send), weftSuccess);
  }
  if (p.recv != nullptr) {
    EXPECT_EQ(gOps->closeRecv(p.recv), weftSuccess);
  }
}

// Brings up a fresh plugin context (its settings from the environment the test set), connects one pair through
// its own listener, runs body(ctx, pair), and takes it all down again.
template <typename Body>
void withFreshContextPair(Body body) {
  void* ctx = nullptr;
  ASSERT_EQ(gPlugin->init(&kHost, &ctx), weftSuccess);
  unsigned char handle[WEFT_NET_HANDLE_BYTES];
  void* l = nullptr;
  ASSERT_EQ(gOps->listen(ctx, kToken, handle, &l), weftSuccess);
  Pair p = connectPair(ctx, l, handle, kToken, 3);
  if (p.send != nullptr && p.recv != nullptr) body(ctx, p);
  closePair(p);
  EXPECT_EQ(gOps->closeListen(l), weftSuccess);
  EXPECT_EQ(gPlugin->finalize(ctx), weftSuccess);
}

// A fixture's listener and the connections a test made through it (newPair), closed when the test ends.
// The derived fixture brings up its plugin context, then calls listenOn(ctx) in SetUp and closeAll() in
// TearDown (before it finalizes the context).
class TransportTest : public ::testing::Test {
 protected:
  void listenOn(void* ctx) {
    listenCtx_ = ctx;
    pairs_.reserve(8);  // newPair() hands out references
    ASSERT_NE(ctx, nullptr);
    ASSERT_EQ(gOps->listen(ctx, kToken, handle_, &listen_), weftSuccess);
    ASSERT_NE(listen_, nullptr);
  }

  // Closes what is still open: a test that closes something itself sets it to null (or clears pairs_).
  void closeAll() {
    for (Pair& p : pairs_) closePair(p);
    if (listen_ != nullptr) {
      EXPECT_EQ(gOps->closeListen(listen_), weftSuccess);
    }
  }

  Pair& newPair(uint64_t id = 1) {
    pairs_.push_back(connectPair(listenCtx_, listen_, handle_, kToken, id));
    return pairs_.back();
  }

  unsigned char handle_[WEFT_NET_HANDLE_BYTES] = {};
  void* listen_ = nullptr;
  std::vector<Pair> pairs_;

 private:
  void* listenCtx_ = nullptr;
};

// Connects from a context of its own (a forked child's): done when connect returns the comm. Null on an
// error or at the deadline.
inline void* connectFrom(void* ctx, const unsigned char* handle, uint64_t id) {
  void* send = nullptr;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (send == nullptr && Clock::now() < deadline) {
    if (gOps->connect(ctx, handle, kToken, id, &send) != weftSuccess) return nullptr;
    if (send == nullptr) gOps->waitReady(ctx, 1000);
  }
  return send;
}

// Accepts one connection on listenComm, the connector being elsewhere (another thread or process). Null on
// an error or at the deadline.
inline void* acceptFrom(void* ctx, void* listenComm, uint64_t* id) {
  void* recv = nullptr;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (recv == nullptr && Clock::now() < deadline) {
    if (gOps->accept(listenComm, &recv, id) != weftSuccess) return nullptr;
    if (recv == nullptr) gOps->waitReady(ctx, 1000);
  }
  return recv;
}

// A child process that connects to the listener of handle from a context of its own and runs
// body(ctx, sendComm), exiting 0 when no assertion failed (2 and up otherwise). Returns the child's pid
// (-1 when fork failed); reap it.
template <typename Body>
pid_t forkSender(const unsigned char* handle, uint64_t id, Body body) {
  std::fflush(nullptr);  // else the child, flushing its own output, writes the parent's pending output again
  pid_t pid = fork();
  if (pid != 0) return pid;
  alarm(120);  // a child that hangs dies rather than holding the test
  void* ctx = nullptr;
  if (gPlugin->init(&kHost, &ctx) != weftSuccess) _exit(2);
  void* send = connectFrom(ctx, handle, id);
  if (send == nullptr) _exit(3);
  body(ctx, send);
  bool failed = ::testing::Test::HasFailure();
  gOps->closeSend(send);
  gPlugin->finalize(ctx);
  _exit(failed ? 5 : 0);
}

// Waits for a forked child; returns its exit status (or 128 + signal).
inline int reap(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Sends sizes[i] as message i (all posted at once), checking completion in order.
inline void sendAll(void* ctx, void* sendComm, const std::vector<size_t>& sizes, uint32_t tag) {
  std::vector<std::vector<unsigned char>> bufs;
  bufs.reserve(sizes.size());
  std::vector<void*> reqs(sizes.size(), nullptr);
  for (size_t m = 0; m < sizes.size(); ++m) bufs.push_back(makeMessage(m, sizes[m]));
  for (size_t m = 0; m < sizes.size(); ++m) {
    ASSERT_EQ(gOps->isend(sendComm, bufs[m].data(), sizes[m], tag, nullptr, &reqs[m]), weftSuccess);
  }
  for (size_t m = 0; m < sizes.size(); ++m) {
    size_t size = 12345;
    ASSERT_EQ(waitRequest(ctx, reqs[m], &size), weftSuccess) << "message " << m;
    EXPECT_EQ(size, sizes[m]);
  }
}

// What the receiving side checks of the order in which the receives of one connection complete.
enum class Completion {
  kAnyOrder,   // none: each receive is tested on its own
  kPostOrder,  // when a receive is done, every one posted before it is done too
};

// Tests every request, newest first, until all are done (each then set to null), calling onDone(k, size)
// for request k as it completes; waits in the transport between passes. Testing the newest first is what
// lets kPostOrder catch a transport completing a receive ahead of an older one.
template <typename OnDone>
void testUntilDone(void* ctx, std::vector<void*>& reqs, Completion order, OnDone onDone) {
  size_t left = reqs.size();
  auto deadline = Clock::now() + kDeadline;
  while (left > 0) {
    ASSERT_LT(Clock::now(), deadline);
    for (size_t k = reqs.size(); k-- > 0;) {
      if (reqs[k] == nullptr) continue;
      int done = 0;
      size_t size = 0;
      ASSERT_EQ(gOps->test(reqs[k], &done, &size), weftSuccess) << "message " << k;
      if (!done) continue;
      reqs[k] = nullptr;
      --left;
      onDone(k, size);
      if (order != Completion::kPostOrder) continue;
      for (size_t j = 0; j < k; ++j) {
        if (reqs[j] == nullptr) continue;
        ASSERT_EQ(gOps->test(reqs[j], &done, &size), weftSuccess) << "message " << j;
        ASSERT_EQ(done, 1) << "message " << k << " completed before " << j;
        reqs[j] = nullptr;
        --left;
        onDone(j, size);
      }
    }
    if (left > 0) gOps->waitReady(ctx, 1000);
  }
}

// Receives the messages of sendAll (all posted at once, each one byte larger than sent so that a longer
// write shows), testing the newest first.
inline void recvAll(void* ctx, void* recvComm, const std::vector<size_t>& sizes, uint32_t tag, Completion order) {
  std::vector<std::vector<unsigned char>> bufs(sizes.size());
  std::vector<void*> reqs(sizes.size(), nullptr);
  for (size_t m = 0; m < sizes.size(); ++m) bufs[m].assign(sizes[m] + 1, 0xee);
  for (size_t m = 0; m < sizes.size(); ++m) {
    ASSERT_EQ(gOps->irecv(recvComm, bufs[m].data(), bufs[m].size(), tag, nullptr, &reqs[m]), weftSuccess);
  }
  testUntilDone(ctx, reqs, order, [&](size_t k, size_t size) {
    EXPECT_EQ(size, sizes[k]) << "message " << k;
    EXPECT_TRUE(checkMessage(k, bufs[k].data(), sizes[k])) << "message " << k;
    EXPECT_EQ(bufs[k][sizes[k]], 0xee) << "message " << k;
  });
}

// sendAll over p with recvAll on the other end, the receiver in a thread of its own.
inline void roundTrip(void* ctx, const Pair& p, const std::vector<size_t>& sizes, uint32_t tag, Completion order) {
  std::thread receiver([&] { recvAll(ctx, p.recv, sizes, tag, order); });
  sendAll(ctx, p.send, sizes, tag);
  receiver.join();
}

// Two connections used by two threads at the same time, each thread sending on one and receiving on the
// other (a with tag 1, b with tag 2), while a third thread calls waitReady. Each pair's send must reach its
// own recv.
inline void crossTraffic(void* ctx, const Pair& a, const Pair& b, const std::vector<size_t>& sizes,
                         Completion order) {
  std::atomic<bool> stop{false};
  std::thread waiter([&] {
    while (!stop) gOps->waitReady(ctx, 2000);
  });
  std::thread t1([&] {
    std::thread r([&] { recvAll(ctx, b.recv, sizes, 2, order); });
    sendAll(ctx, a.send, sizes, 1);
    r.join();
  });
  std::thread t2([&] {
    std::thread r([&] { recvAll(ctx, a.recv, sizes, 1, order); });
    sendAll(ctx, b.send, sizes, 2);
    r.join();
  });
  t1.join();
  t2.join();
  stop = true;
  waiter.join();
}

}  // namespace weft_test
