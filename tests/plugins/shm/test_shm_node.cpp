// The shm plugin's node backend through its C ABI alone (dlopen), with the ranks of a communicator as
// threads of this process: setup, every collective on every path against a sequential reference,
// mismatched calls, a silent peer (WEFT_TIMEOUT) and bad arguments.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "weft/plugin.h"

namespace {

// What the plugin logs, kept for the tests that look for a line.
std::mutex logMutex;
std::vector<std::string> logLines;
void keepLog(weftLogLevel_t, const char*, const char* message) {
  std::lock_guard<std::mutex> lock(logMutex);
  logLines.emplace_back(message);
}
size_t logLinesWith(const std::string& text) {
  std::lock_guard<std::mutex> lock(logMutex);
  return static_cast<size_t>(std::count_if(logLines.begin(), logLines.end(),
                                           [&](const std::string& l) { return l.find(text) != l.npos; }));
}
const char* envConfig(const char* name) { return std::getenv(name); }
const weftPluginHost_v1 kHost = {WEFT_PLUGIN_ABI_VERSION, keepLog, envConfig};

// Float sum/max only: what these tests use (Weft passes its full kernel set).
void floatKernel(void* dst, const void* a, const void* b, size_t count, weftDataType_t type, weftRedOp_t op) {
  ASSERT_EQ(type, weftFloat32);
  auto* d = static_cast<float*>(dst);
  const auto* x = static_cast<const float*>(a);
  const auto* y = static_cast<const float*>(b);
  for (size_t i = 0; i < count; ++i) d[i] = op == weftMax ? std::max(x[i], y[i]) : x[i] + y[i];
}

int readFlag(const void* flag) { return static_cast<const std::atomic<int>*>(flag)->load(); }

// A table the plugin exports (null when it does not): its entry table or an extension's.
template <typename Table>
const Table* pluginTable(const char* symbol) {
  void* lib = dlopen(WEFT_SHM_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  return lib ? static_cast<const Table*>(dlsym(lib, symbol)) : nullptr;
}

const weftPlugin_v1_t* plugin() {
  static const weftPlugin_v1_t* table = pluginTable<weftPlugin_v1_t>(WEFT_PLUGIN_SYMBOL_V1);
  return table;
}

// A communicator of n thread-ranks over one plugin context.
class NodeGroup {
 public:
  // abortFlag: what the communicator's `aborted` callback reports (none: never aborted).
  NodeGroup(int n, double timeoutSeconds = 30, const std::atomic<int>* abortFlag = nullptr)
      : ops_(plugin()->backend), comms_(n) {
    EXPECT_EQ(plugin()->init(&kHost, &ctx_), weftSuccess);
    std::vector<unsigned char> addresses(n * WEFT_BACKEND_ADDRESS_BYTES);
    for (int r = 0; r < n; ++r) {
      weftBackendComm_v1 info{r, n, timeoutSeconds, floatKernel, abortFlag ? readFlag : nullptr, abortFlag};
      EXPECT_EQ(ops_->commPrepare(ctx_, &info, &addresses[r * WEFT_BACKEND_ADDRESS_BYTES], &comms_[r]),
                weftSuccess);
    }
    for (int r = 0; r < n; ++r) EXPECT_EQ(ops_->commConnect(comms_[r], addresses.data()), weftSuccess);
  }
  ~NodeGroup() {
    for (void* c : comms_) ops_->commDestroy(c);
    plugin()->finalize(ctx_);
  }

  int size() const { return static_cast<int>(comms_.size()); }
  void* comm(int r) const { return comms_[r]; }
  const weftBackendOps_v1* ops() const { return ops_; }

  // Runs op(rank) on every rank at once; returns each rank's result.
  std::vector<weftResult_t> run(const std::function<weftBackendOp_v1(int)>& opOf) {
    std::vector<weftResult_t> results(comms_.size(), weftInternalError);
    std::vector<std::thread> threads;
    for (int r = 0; r < size(); ++r) {
      threads.emplace_back([&, r] {
        weftBackendOp_v1 op = opOf(r);
        results[r] = ops_->supports(comms_[r], &op) ? ops_->run(comms_[r], &op) : weftInvalidUsage;
      });
    }
    for (auto& t : threads) t.join();
    return results;
  }

 private:
  void* ctx_ = nullptr;
  const weftBackendOps_v1* ops_;
  std::vector<void*> comms_;
};

float input(int rank, size_t i) { return static_cast<float>((rank * 7 + static_cast<int>(i % 13)) % 11) - 5.0f; }

// Every collective, out of place, on buffers of count * p floats per rank (send[r], recv[r]), against a
// sequential reference (p >= 2).
void checkEveryCollective(NodeGroup& g, const std::vector<float*>& send, const std::vector<float*>& recv,
                          size_t count) {
  const int p = g.size();
  for (int r = 0; r < p; ++r) {
    for (size_t i = 0; i < count * p; ++i) send[r][i] = input(r, i);
  }
  auto reset = [&] {
    for (float* v : recv) std::fill(v, v + count * p, -999.0f);
  };
  auto op = [&](weftCollType_t coll, int root = 0) {
    return [&, coll, root](int r) {
      return weftBackendOp_v1{coll, send[r], recv[r], count, weftFloat32, weftSum, root};
    };
  };
  auto allOk = [](const std::vector<weftResult_t>& results) {
    for (weftResult_t x : results) EXPECT_EQ(x, weftSuccess);
  };

  reset();
  allOk(g.run(op(weftCollAllReduce)));
  for (int r = 0; r < p; ++r) {
    for (size_t i = 0; i < count; ++i) {
      double want = 0;
      for (int q = 0; q < p; ++q) want += input(q, i);
      ASSERT_EQ(recv[r][i], static_cast<float>(want)) << "allreduce rank " << r << " index " << i;
    }
  }
  reset();
  allOk(g.run(op(weftCollAllGather)));
  for (int r = 0; r < p; ++r) {
    for (int q = 0; q < p; ++q) {
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(recv[r][q * count + i], input(q, i)) << "allgather";
    }
  }
  reset();
  allOk(g.run(op(weftCollReduceScatter)));
  for (int r = 0; r < p; ++r) {
    for (size_t i = 0; i < count; ++i) {
      double want = 0;
      for (int q = 0; q < p; ++q) want += input(q, r * count + i);
      ASSERT_EQ(recv[r][i], static_cast<float>(want)) << "reducescatter rank " << r;
    }
  }
  reset();
  allOk(g.run(op(weftCollAllToAll)));
  for (int r = 0; r < p; ++r) {
    for (int q = 0; q < p; ++q) {
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(recv[r][q * count + i], input(q, r * count + i)) << "alltoall";
    }
  }
  reset();
  allOk(g.run(op(weftCollBroadcast, 1)));
  for (int r = 0; r < p; ++r) {
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(recv[r][i], input(1, i)) << "broadcast rank " << r;
  }
  reset();
  const int reduceRoot = p - 1;  // not rank 0, which checks that non-roots' outputs stay untouched
  allOk(g.run(op(weftCollReduce, reduceRoot)));
  for (size_t i = 0; i < count; ++i) {
    double want = 0;
    for (int q = 0; q < p; ++q) want += input(q, i);
    ASSERT_EQ(recv[reduceRoot][i], static_cast<float>(want)) << "reduce";
  }
  EXPECT_EQ(recv[0][0], -999.0f) << "reduce wrote a non-root's output";
}

std::vector<float*> pointers(std::vector<std::vector<float>>& buffers) {
  std::vector<float*> all;
  for (auto& b : buffers) all.push_back(b.data());
  return all;
}

// Every collective on a size that takes the inline, staged, sliced and direct paths.
class NodeCollectives : public ::testing::TestWithParam<size_t> {};

TEST_P(NodeCollectives, MatchSequentialReference) {
  const size_t count = GetParam();
  NodeGroup g(3);
  std::vector<std::vector<float>> send(g.size(), std::vector<float>(count * g.size()));
  std::vector<std::vector<float>> recv = send;
  checkEveryCollective(g, pointers(send), pointers(recv), count);
}

const weftBackendAdviceOps_v1* adviceOps() {
  static const weftBackendAdviceOps_v1* table =
      pluginTable<weftBackendAdviceOps_v1>(WEFT_BACKEND_ADVICE_SYMBOL_V1);
  return table;
}

// The CPUs this process may run on (its thread-ranks share them).
int cpusHere() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
}

// Whether process_vm_readv works here (a seccomp profile may forbid it; the plugin then says so at init). Valid
// once a group exists.
bool cmaWorksHere() { return logLinesWith("CMA not available") == 0; }

// Whether a 2-rank group here chooses between CMA and the bounce: each rank has a CPU and CMA works.
bool twoRanksChoose() { return cpusHere() >= 2 && cmaWorksHere(); }

// The advice extension: whether Weft should bounce an AllReduce through plugin memory. WEFT_SHM_CMA_COST=high
// always says yes, low says no from one bounce piece (512 KiB) where every rank has a CPU, measure says what
// the first collective found; every setting still gives the reference's results, and the answer never
// changes after that first collective.
class CmaCostSetting : public ::testing::TestWithParam<const char*> {};

TEST_P(CmaCostSetting, AdviceFollowsTheSettingAndResultsMatch) {
  const weftBackendAdviceOps_v1* advice = adviceOps();
  ASSERT_NE(advice, nullptr);
  ASSERT_EQ(setenv("WEFT_SHM_CMA_COST", GetParam(), 1), 0);
  const std::string setting = GetParam();
  {
    NodeGroup g(2);
    const weftBackendOp_v1 small{weftCollAllReduce, nullptr, nullptr, 16384, weftFloat32, weftSum, 0};  // 64 KiB
    const weftBackendOp_v1 large{weftCollAllReduce, nullptr, nullptr, 1 << 20, weftFloat32, weftSum, 0};
    for (size_t count : {size_t{1000}, size_t{140000}}) {  // staged; direct, above one piece
      std::vector<std::vector<float>> send(g.size(), std::vector<float>(count * g.size()));
      std::vector<std::vector<float>> recv = send;
      checkEveryCollective(g, pointers(send), pointers(recv), count);
      const int large0 = advice->prefersPluginMemory(g.comm(0), &large);
      if (setting == "high" || !twoRanksChoose()) {
        EXPECT_EQ(large0, 1) << setting;
      } else if (setting == "low") {
        EXPECT_EQ(large0, 0);
      }
      for (int r = 0; r < g.size(); ++r) {
        EXPECT_EQ(advice->prefersPluginMemory(g.comm(r), &small), 1) << setting;
        EXPECT_EQ(advice->prefersPluginMemory(g.comm(r), &large), large0) << "ranks disagree";
      }
    }
  }
  unsetenv("WEFT_SHM_CMA_COST");
}

INSTANTIATE_TEST_SUITE_P(Settings, CmaCostSetting, ::testing::Values("high", "low", "measure"));

// By default the first collective of a communicator whose ranks each have a CPU times both ways and says what
// it found, once (rank 0); ranks sharing CPUs do not measure.
TEST(NodeBackend, FirstCollectiveMeasuresOnceWhereRanksHaveCpus) {
  const std::string line = "node backend: AllReduce of 2048 KiB at 2 ranks, fresh inputs: ";
  const size_t before = logLinesWith(line);
  bool measures = false;
  {
    NodeGroup g(2);
    measures = twoRanksChoose();
    std::vector<std::vector<float>> send(2, std::vector<float>(64, 1.0f));
    std::vector<std::vector<float>> recv = send;
    checkEveryCollective(g, pointers(send), pointers(recv), 32);
  }
  EXPECT_EQ(logLinesWith(line) - before, measures ? 1u : 0u);
  {
    NodeGroup g(cpusHere() + 1);  // more ranks than CPUs
    std::vector<std::vector<float>> send(g.size(), std::vector<float>(64 * g.size(), 1.0f));
    std::vector<std::vector<float>> recv = send;
    checkEveryCollective(g, pointers(send), pointers(recv), 64);
  }
  EXPECT_EQ(logLinesWith("node backend: AllReduce of 2048 KiB at"), logLinesWith(line)) << "measured there too";
  EXPECT_EQ(logLinesWith(line) - before, measures ? 1u : 0u);
}

// The staging ring under run-ahead: ranks that need not wait (a Broadcast's root, a Reduce's others) run up to
// 31 collectives ahead, staging each input end to end and wrapping around the ring many times over sizes
// from a few bytes to the largest staged (more than the ring holds at once: they must wait for the ranks
// behind before overwriting an area), while the ranks behind still read their areas. The others are held
// back now and then, so that the ones ahead fill the window. Every output is checked: an area reused too
// early would show another collective's data. Once with the default ring (2 MiB, of which small collectives
// walk the first MiB), once with WEFT_SHM_STAGE_BYTES=4K: a 32 KiB ring, wrapped every few collectives. There,
// until 2026-11-29, a rank ahead whose fresh bytes did not fit before the ring's end went back to its start
// over the area of the collective just before when that lay there (never waited for), and the ranks behind
// read the next collective's data as that one's: this case failed in 10 of 10 runs of that code.
struct RunAheadRing {
  const char* stageBytes;      // WEFT_SHM_STAGE_BYTES, or null for the default
  std::vector<size_t> counts;  // floats per call, in turn; at most the stage limit of Reduce and Broadcast
};

void PrintTo(const RunAheadRing& ring, std::ostream* out) {
  *out << "WEFT_SHM_STAGE_BYTES=" << (ring.stageBytes != nullptr ? ring.stageBytes : "(default)");
}

class StagingRingUnderRunAhead : public ::testing::TestWithParam<RunAheadRing> {};

TEST_P(StagingRingUnderRunAhead, EveryOutputMatches) {
  const std::vector<size_t>& counts = GetParam().counts;
  constexpr int kRounds = 60;
  const size_t total = counts.size() * kRounds;
  if (GetParam().stageBytes != nullptr) {
    ASSERT_EQ(setenv("WEFT_SHM_STAGE_BYTES", GetParam().stageBytes, 1), 0);
  }
  NodeGroup g(3);
  unsetenv("WEFT_SHM_STAGE_BYTES");
  const int p = g.size();
  auto value = [](int rank, size_t k, size_t i) { return static_cast<float>((rank * 31 + k * 7 + i) % 1009); };
  for (weftCollType_t coll : {weftCollBroadcast, weftCollReduce}) {
    std::vector<std::vector<std::vector<float>>> in(p), out(p);
    for (int r = 0; r < p; ++r) {
      for (size_t k = 0; k < total; ++k) {
        const size_t n = counts[k % counts.size()];
        in[r].emplace_back(n);
        for (size_t i = 0; i < n; ++i) in[r][k][i] = value(r, k, i);
        out[r].emplace_back(n, -1.0f);
      }
    }
    std::vector<weftResult_t> results(p, weftSuccess);
    std::vector<std::thread> threads;
    for (int r = 0; r < p; ++r) {
      threads.emplace_back([&, r] {
        const bool behind = (coll == weftCollBroadcast) == (r != 0);  // the ranks that wait
        for (size_t k = 0; k < total && results[r] == weftSuccess; ++k) {
          if (behind && k % 37 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
          weftBackendOp_v1 op{coll, in[r][k].data(), out[r][k].data(), in[r][k].size(), weftFloat32, weftSum, 0};
          results[r] = g.ops()->run(g.comm(r), &op);
        }
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < p; ++r) ASSERT_EQ(results[r], weftSuccess) << g.ops()->lastError(g.comm(r));
    for (size_t k = 0; k < total; ++k) {
      for (size_t i = 0; i < in[0][k].size(); ++i) {
        if (coll == weftCollBroadcast) {
          for (int r = 0; r < p; ++r)
            ASSERT_EQ(out[r][k][i], value(0, k, i)) << "broadcast " << k << " rank " << r;
        } else {
          double want = 0;
          for (int q = 0; q < p; ++q) want += value(q, k, i);
          ASSERT_EQ(out[0][k][i], static_cast<float>(want)) << "reduce " << k << " index " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    NodeBackend, StagingRingUnderRunAhead,
    ::testing::Values(RunAheadRing{nullptr, {3, 8000, 17, 7000, 40, 8000, 300, 6000, 1024, 2048}},  // 8000: 31 KiB
                      RunAheadRing{"4K", {3, 1000, 17, 700, 40, 1000, 300, 600, 256, 512}}),  // 1000: 3.9 KiB
    [](const ::testing::TestParamInfo<RunAheadRing>& info) {
      return std::string(info.param.stageBytes != nullptr ? "Stage4K" : "DefaultRing");
    });

// A staged Broadcast of 32 KiB or more, where each rank has a CPU, is staged by its root in two halves, each
// published as it lands while the others copy out what is there (shm_node_colls.cpp). Sizes on both sides of
// that bound and halves that end off a cache line, both roots, in place and not; now and then the root comes
// late (its peer waits for each half) or early (it runs ahead, staging the next while the peer reads).
TEST(NodeBackend, BroadcastInHalvesMatches) {
  NodeGroup g(2);
  if (cpusHere() < 2) std::cout << "[   NOTE   ] one CPU here: the Broadcasts go whole, not in halves\n";
  const std::vector<size_t> counts = {8192, 10001, 16384, 8191, 12345, 16000, 9000};  // floats: 32 KiB = 8192
  constexpr size_t kCalls = 140;
  auto value = [](int rank, size_t k, size_t i) { return static_cast<float>((rank * 17 + k * 5 + i) % 1019); };
  auto rootOf = [](size_t k) { return static_cast<int>(k / 3 % 2); };
  auto inPlace = [](size_t k) { return k % 4 == 1; };
  std::vector<std::vector<std::vector<float>>> in(2), out(2);
  for (int r = 0; r < 2; ++r) {
    for (size_t k = 0; k < kCalls; ++k) {
      const size_t n = counts[k % counts.size()];
      in[r].emplace_back(n);
      for (size_t i = 0; i < n; ++i) in[r][k][i] = value(r, k, i);
      out[r].emplace_back(n, -1.0f);
    }
  }
  std::vector<weftResult_t> results(2, weftSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      for (size_t k = 0; k < kCalls && results[r] == weftSuccess; ++k) {
        const bool isRoot = r == rootOf(k);
        if ((isRoot && k % 5 == 0) || (!isRoot && k % 11 == 0)) {
          std::this_thread::sleep_for(std::chrono::microseconds(300));
        }
        float* buffer = inPlace(k) ? in[r][k].data() : out[r][k].data();
        weftBackendOp_v1 op{weftCollBroadcast, in[r][k].data(), buffer,   in[r][k].size(),
                            weftFloat32,       weftSum,         rootOf(k)};
        results[r] = g.ops()->run(g.comm(r), &op);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) ASSERT_EQ(results[r], weftSuccess) << g.ops()->lastError(g.comm(r));
  for (size_t k = 0; k < kCalls; ++k) {
    for (int r = 0; r < 2; ++r) {
      const std::vector<float>& got = inPlace(k) ? in[r][k] : out[r][k];
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], value(rootOf(k), k, i)) << "broadcast " << k << " rank " << r << " index " << i;
      }
    }
  }
}

// From keeping pace to running ahead and back: AllGathers of at most 2 KiB, in which every rank waits for
// every other, take areas at the start of each rank's ring again and again (shm_node_stage.cpp); then a run
// of Broadcasts whose non-roots are held back lets the root run ahead, its next area still being read by
// its peers, so it must take fresh bytes (or wait) rather than overwrite it; then AllGathers again. Every
// output is checked: an area reused too early would show another collective's data.
TEST(NodeBackend, StagingRingFromPaceToRunAhead) {
  const std::vector<size_t> gatherCounts = {100, 256, 7, 500, 64};  // floats: 28 B (inline) to 2000 B per rank
  const std::vector<size_t> broadcastCounts = {500, 1024, 300, 3000, 80, 1024};
  constexpr size_t kGathers = 20;
  constexpr size_t kBroadcasts = 45;  // more than the 31 a root may run ahead
  constexpr int kPhases = 6;
  NodeGroup g(3);
  const int p = g.size();
  auto value = [](int rank, size_t k, size_t i) { return static_cast<float>((rank * 13 + k * 11 + i) % 1013); };
  struct Call {
    weftCollType_t coll;
    size_t count;
  };
  std::vector<Call> calls;
  for (int phase = 0; phase < kPhases; ++phase) {
    for (size_t k = 0; k < kGathers; ++k) {
      calls.push_back({weftCollAllGather, gatherCounts[k % gatherCounts.size()]});
    }
    for (size_t k = 0; k < kBroadcasts; ++k) {
      calls.push_back({weftCollBroadcast, broadcastCounts[k % broadcastCounts.size()]});
    }
  }
  std::vector<std::vector<std::vector<float>>> in(p), out(p);
  for (int r = 0; r < p; ++r) {
    for (size_t k = 0; k < calls.size(); ++k) {
      in[r].emplace_back(calls[k].count);
      for (size_t i = 0; i < calls[k].count; ++i) in[r][k][i] = value(r, k, i);
      const bool gather = calls[k].coll == weftCollAllGather;
      out[r].emplace_back(gather ? calls[k].count * p : calls[k].count, -1.0f);
    }
  }
  std::vector<weftResult_t> results(p, weftSuccess);
  std::vector<std::thread> threads;
  threads.reserve(p);
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      for (size_t k = 0; k < calls.size() && results[r] == weftSuccess; ++k) {
        const bool firstBroadcast = calls[k].coll == weftCollBroadcast && calls[k - 1].coll == weftCollAllGather;
        if (r != 0 && firstBroadcast) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        weftBackendOp_v1 op{
            calls[k].coll, in[r][k].data(), out[r][k].data(), calls[k].count, weftFloat32, weftSum, 0};
        results[r] = g.ops()->run(g.comm(r), &op);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < p; ++r) ASSERT_EQ(results[r], weftSuccess) << g.ops()->lastError(g.comm(r));
  for (size_t k = 0; k < calls.size(); ++k) {
    const size_t n = calls[k].count;
    for (int r = 0; r < p; ++r) {
      if (calls[k].coll == weftCollBroadcast) {
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(out[r][k][i], value(0, k, i)) << "broadcast " << k << " rank " << r;
        }
        continue;
      }
      for (int q = 0; q < p; ++q) {
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(out[r][k][q * n + i], value(q, k, i)) << "allgather " << k << " rank " << r << " from " << q;
        }
      }
    }
  }
}

// Large staged ReduceScatters (up to WEFT_SHM_STAGE_BYTES, a quarter of the ring) between small Broadcasts
// whose root runs ahead: small collectives go back to the start of the ring once past its first MiB unless
// the collective just before lies there, so staging areas are placed both ways around the large ones (with
// 2 MiB stages, a ReduceScatter at the start of the ring reaches past that first MiB). Every output is
// checked against a sequential reference: an area reused too early would show.
struct StageSize {
  const char* setting;  // WEFT_SHM_STAGE_BYTES
  size_t bytes;
};

void PrintTo(const StageSize& size, std::ostream* out) { *out << "WEFT_SHM_STAGE_BYTES=" << size.setting; }

class StagedAmongSmall : public ::testing::TestWithParam<StageSize> {};

TEST_P(StagedAmongSmall, ReduceScattersMatchReference) {
  ASSERT_EQ(setenv("WEFT_SHM_STAGE_BYTES", GetParam().setting, 1), 0);
  NodeGroup g(3);
  unsetenv("WEFT_SHM_STAGE_BYTES");
  const int p = g.size();
  const size_t largest = GetParam().bytes / (sizeof(float) * p);  // floats per rank of the largest staged one
  // Even positions are ReduceScatters (input count * p floats), odd ones Broadcasts from rank 0.
  const std::vector<size_t> counts = {largest, 5, largest / 3, 300, largest * 3 / 4, 64, 7, 1, largest / 2, 2000};
  constexpr int kRounds = 12;
  const size_t total = counts.size() * kRounds;
  auto value = [](int rank, size_t k, size_t i) {
    return static_cast<float>((static_cast<size_t>(rank) * 17 + k * 5 + i) % 997);
  };
  auto collOf = [](size_t k) { return k % 2 == 0 ? weftCollReduceScatter : weftCollBroadcast; };
  std::vector<std::vector<std::vector<float>>> in(p), out(p);
  for (int r = 0; r < p; ++r) {
    for (size_t k = 0; k < total; ++k) {
      const size_t n = counts[k % counts.size()];
      in[r].emplace_back(collOf(k) == weftCollReduceScatter ? n * p : n);
      for (size_t i = 0; i < in[r][k].size(); ++i) in[r][k][i] = value(r, k, i);
      out[r].emplace_back(n, -1.0f);
    }
  }
  std::vector<weftResult_t> results(p, weftSuccess);
  std::vector<std::thread> threads;
  threads.reserve(p);
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      for (size_t k = 0; k < total && results[r] == weftSuccess; ++k) {
        if (r != 0 && k % 11 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        weftBackendOp_v1 op{collOf(k), in[r][k].data(), out[r][k].data(), out[r][k].size(), weftFloat32, weftSum,
                            0};
        EXPECT_TRUE(g.ops()->supports(g.comm(r), &op));
        results[r] = g.ops()->run(g.comm(r), &op);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < p; ++r) ASSERT_EQ(results[r], weftSuccess) << g.ops()->lastError(g.comm(r));
  for (size_t k = 0; k < total; ++k) {
    const size_t n = out[0][k].size();
    for (int r = 0; r < p; ++r) {
      for (size_t i = 0; i < n; ++i) {
        if (collOf(k) == weftCollBroadcast) {
          ASSERT_EQ(out[r][k][i], value(0, k, i)) << "broadcast " << k << " rank " << r;
        } else {
          double want = 0;
          for (int q = 0; q < p; ++q) want += value(q, k, r * n + i);
          ASSERT_EQ(out[r][k][i], static_cast<float>(want))
              << "reducescatter " << k << " rank " << r << " index " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(StageSizes, StagedAmongSmall,
                         ::testing::Values(StageSize{"256K", 256 << 10}, StageSize{"2M", 2 << 20}),
                         [](const ::testing::TestParamInfo<StageSize>& info) {
                           return std::string(info.param.setting);
                         });

const weftMemoryOps_v1* memoryOps() {
  static const weftMemoryOps_v1* table = [] {
    void* lib = dlopen(WEFT_SHM_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    return lib ? static_cast<const weftMemoryOps_v1*>(dlsym(lib, WEFT_MEMORY_SYMBOL_V1)) : nullptr;
  }();
  return table;
}

// Buffers of weftMemAlloc's kind (the plugin's memory extension), freed at the end.
class SharedBuffers {
 public:
  SharedBuffers(int n, size_t bytes) : memory_(memoryOps()) {
    for (int r = 0; r < n; ++r) {
      void* p = nullptr;
      char why[256] = "";
      EXPECT_EQ(memory_->alloc(nullptr, bytes, &p, why, sizeof why), weftSuccess) << why;
      buffers_.push_back(static_cast<float*>(p));
    }
  }
  ~SharedBuffers() {
    for (float* p : buffers_) {
      char why[256] = "";
      EXPECT_EQ(memory_->free(nullptr, p, why, sizeof why), weftSuccess) << why;
    }
  }
  SharedBuffers(const SharedBuffers&) = delete;
  SharedBuffers& operator=(const SharedBuffers&) = delete;
  const std::vector<float*>& all() const { return buffers_; }

 private:
  const weftMemoryOps_v1* memory_;
  std::vector<float*> buffers_;
};

// Direct collectives on weftMemAlloc buffers: the peers' buffers are mapped (the log says so) and the results
// are the reference's; on every rank, on some ranks only (the others' go by CMA), after buffers were freed
// and others allocated (most likely at the same addresses: a peer that kept using its mapping of a freed
// buffer would read the old data), and on heap memory once every shared buffer is gone.
TEST(NodeBackend, WeftMemoryBuffersMatchReference) {
  const weftMemoryOps_v1* memory = memoryOps();
  ASSERT_NE(memory, nullptr) << WEFT_MEMORY_SYMBOL_V1 " not exported";
  ASSERT_EQ(memory->abiVersion, 1u);
  constexpr size_t kCount = 70000;  // 280 KB per rank: direct for every collective
  NodeGroup g(3);
  const int p = g.size();
  const size_t bytes = kCount * p * sizeof(float);
  {
    SharedBuffers send(p, bytes), recv(p, bytes);
    const size_t mappedBefore = logLinesWith("mapped rank");
    checkEveryCollective(g, send.all(), recv.all(), kCount);
    EXPECT_GE(logLinesWith("mapped rank") - mappedBefore, static_cast<size_t>(2 * p * (p - 1)))
        << "the peers' weftMemAlloc buffers were not mapped";
  }
  {
    SharedBuffers send(p, bytes), recv(p, bytes);  // allocated again: a peer's old mapping must not be used
    checkEveryCollective(g, send.all(), recv.all(), kCount);
    std::vector<std::vector<float>> heap(p, std::vector<float>(kCount * p));
    std::vector<float*> mixed = send.all();
    mixed[1] = heap[1].data();  // rank 1's input by CMA, the others' mapped
    checkEveryCollective(g, mixed, recv.all(), kCount);
  }
  std::vector<std::vector<float>> send(p, std::vector<float>(kCount * p));
  std::vector<std::vector<float>> recv = send;
  checkEveryCollective(g, pointers(send), pointers(recv), kCount);
}

// More weftMemAlloc buffers than a rank's table lists (kSharedRegionSlots, 256): the least recently used
// leave it, and every result is still the reference's.
TEST(NodeBackend, MoreWeftMemoryBuffersThanTheTableHolds) {
  ASSERT_NE(memoryOps(), nullptr);
  constexpr int kCalls = 150;       // a send and a receive buffer each: 300 per rank
  constexpr size_t kCount = 10000;  // 40 KB: direct
  NodeGroup g(2);
  std::vector<std::unique_ptr<SharedBuffers>> send, recv;
  for (int c = 0; c < kCalls; ++c) {
    send.push_back(std::make_unique<SharedBuffers>(g.size(), kCount * sizeof(float)));
    recv.push_back(std::make_unique<SharedBuffers>(g.size(), kCount * sizeof(float)));
  }
  for (int round = 0; round < 2; ++round) {
    for (int c = 0; c < kCalls; ++c) {
      for (int r = 0; r < g.size(); ++r) {
        for (size_t i = 0; i < kCount; ++i) send[c]->all()[r][i] = input(r, i + c + round);
      }
      const std::vector<weftResult_t> results = g.run([&](int r) {
        return weftBackendOp_v1{
            weftCollAllReduce, send[c]->all()[r], recv[c]->all()[r], kCount, weftFloat32, weftSum, 0};
      });
      for (int r = 0; r < g.size(); ++r) {
        ASSERT_EQ(results[r], weftSuccess) << g.ops()->lastError(g.comm(r));
        for (size_t i = 0; i < kCount; ++i) {
          ASSERT_EQ(recv[c]->all()[r][i], input(0, i + c + round) + input(1, i + c + round))
              << "call " << c << " rank " << r << " index " << i;
        }
      }
    }
  }
}

TEST(NodeBackend, WeftMemoryBadArguments) {
  const weftMemoryOps_v1* memory = memoryOps();
  ASSERT_NE(memory, nullptr);
  char why[256] = "";
  void* p = nullptr;
  EXPECT_NE(memory->alloc(nullptr, 0, &p, why, sizeof why), weftSuccess);
  EXPECT_NE(std::string(why), "");
  EXPECT_EQ(memory->alloc(nullptr, 100, nullptr, why, sizeof why), weftInvalidArgument);
  int onStack = 0;
  why[0] = '\0';
  EXPECT_EQ(memory->free(nullptr, &onStack, why, sizeof why), weftInvalidArgument);
  EXPECT_NE(std::string(why).find("not an allocation"), std::string::npos) << why;
  ASSERT_EQ(memory->alloc(nullptr, 100, &p, why, sizeof why), weftSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  EXPECT_EQ(static_cast<unsigned char*>(p)[99], 0);
  EXPECT_EQ(memory->free(nullptr, p, why, sizeof why), weftSuccess);
  EXPECT_EQ(memory->free(nullptr, p, why, sizeof why), weftInvalidArgument);  // twice
}

const weftBackendListOps_v1* listOps() {
  static const weftBackendListOps_v1* table = pluginTable<weftBackendListOps_v1>(WEFT_BACKEND_LIST_SYMBOL_V1);
  return table;
}

// The list extension: an AllReduce over buffers that each rank cuts differently (thousands of tiny ones,
// so a chunk spans more ranges than one process_vm_readv takes; empty ones; in place and not), against the
// sequential reference.
void checkListAllReduce(NodeGroup& g, const std::vector<float*>& send, const std::vector<float*>& recv,
                        size_t kCount) {
  const weftBackendListOps_v1* list = listOps();
  ASSERT_NE(list, nullptr) << WEFT_BACKEND_LIST_SYMBOL_V1 " not exported";
  ASSERT_EQ(list->abiVersion, 1u);
  const int p = g.size();
  std::vector<std::vector<weftBackendBuffer_v1>> buffers(p);
  for (int r = 0; r < p; ++r) {
    std::fill(recv[r], recv[r] + kCount, -999.0f);
    for (size_t i = 0; i < kCount; ++i) send[r][i] = input(r, i);
    size_t at = 0;
    for (size_t b = 0; at < kCount; ++b) {
      size_t n = std::min(kCount - at, r == 0   ? 1 + b % 3
                                       : r == 1 ? 997 + b * 61 % 5003
                                                : (b % 4 == 0 ? 0 : 40000));
      bool inPlace = (b + r) % 2 == 0;
      if (inPlace) std::copy_n(send[r] + at, n, recv[r] + at);
      buffers[r].push_back({inPlace ? recv[r] + at : send[r] + at, recv[r] + at, n});
      at += n;
    }
  }
  ASSERT_GT(buffers[0].size(), 2048u);
  std::vector<weftResult_t> results(p, weftInternalError);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      weftBackendOp_v1 op{weftCollAllReduce, nullptr, nullptr, kCount, weftFloat32, weftSum, 0};
      results[r] = list->supportsList(g.comm(r), &op)
                       ? list->runList(g.comm(r), &op, buffers[r].data(), buffers[r].size())
                       : weftInvalidUsage;
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < p; ++r) {
    ASSERT_EQ(results[r], weftSuccess) << "rank " << r << ": " << g.ops()->lastError(g.comm(r));
    for (size_t i = 0; i < kCount; ++i) {
      double want = 0;
      for (int q = 0; q < p; ++q) want += input(q, i);
      ASSERT_EQ(recv[r][i], static_cast<float>(want)) << "rank " << r << " index " << i;
    }
  }
}

TEST(NodeBackend, ListAllReduceMatchesReference) {
  constexpr size_t kCount = 300000;
  NodeGroup g(3);
  std::vector<std::vector<float>> send(g.size(), std::vector<float>(kCount));
  std::vector<std::vector<float>> recv = send;
  checkListAllReduce(g, pointers(send), pointers(recv), kCount);
}

// The same on weftMemAlloc buffers: every chunk's ranges are copied through the mapped peer buffers.
TEST(NodeBackend, ListAllReduceOnWeftMemoryMatchesReference) {
  ASSERT_NE(memoryOps(), nullptr);
  constexpr size_t kCount = 300000;
  NodeGroup g(3);
  SharedBuffers send(g.size(), kCount * sizeof(float)), recv(g.size(), kCount * sizeof(float));
  const size_t mappedBefore = logLinesWith("mapped rank");
  checkListAllReduce(g, send.all(), recv.all(), kCount);
  EXPECT_GE(logLinesWith("mapped rank") - mappedBefore, static_cast<size_t>(2 * g.size() * (g.size() - 1)));
}

// Every rank runs its calls through runMany (opsFor(r, true)), then the same calls one by one through run
// (opsFor(r, false): into other outputs); each rank's first failure.
std::vector<weftResult_t> manyThenOneByOne(NodeGroup& g, const weftBackendListOps_v1* list,
                                           const std::function<std::vector<weftBackendOp_v1>(int, bool)>& opsFor) {
  std::vector<weftResult_t> results(g.size(), weftInternalError);
  std::vector<std::thread> threads;
  for (int r = 0; r < g.size(); ++r) {
    threads.emplace_back([&, r] {
      std::vector<weftBackendOp_v1> ops = opsFor(r, true);
      results[r] = list->runMany(g.comm(r), ops.data(), ops.size());
      if (results[r] != weftSuccess) return;
      for (const weftBackendOp_v1& op : opsFor(r, false)) {
        if (weftResult_t x = g.ops()->run(g.comm(r), &op); x != weftSuccess) results[r] = x;
      }
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

// runMany: independent collectives (AllReduces of every staged size, one too large to stage, an AllGather
// between them) give exactly what running them one by one gives.
TEST(NodeBackend, ManyEqualsOneByOne) {
  const weftBackendListOps_v1* list = listOps();
  ASSERT_NE(list, nullptr);
  ASSERT_NE(list->runMany, nullptr);
  const std::vector<size_t> counts = {3, 16, 256, 5000, 1000, 20000, 4, 4};  // 20000 floats: not staged
  NodeGroup g(3);
  const int p = g.size();
  // Per rank: inputs, and outputs for runMany and for the calls one by one.
  std::vector<std::vector<std::vector<float>>> in(p), many(p), single(p);
  for (int r = 0; r < p; ++r) {
    for (size_t k = 0; k < counts.size(); ++k) {
      const size_t n = counts[k] * (k == 3 ? p : 1);  // op 3 is an AllGather
      in[r].emplace_back(counts[k]);
      for (size_t i = 0; i < counts[k]; ++i) in[r][k][i] = input(r, i + k) * 0.37f + static_cast<float>(k);
      many[r].emplace_back(n, -1.0f);
      single[r].emplace_back(n, -2.0f);
    }
  }
  auto opsFor = [&](int r, std::vector<std::vector<float>>& out) {
    std::vector<weftBackendOp_v1> list;
    for (size_t k = 0; k < counts.size(); ++k) {
      list.push_back({k == 3 ? weftCollAllGather : weftCollAllReduce, in[r][k].data(), out[k].data(), counts[k],
                      weftFloat32, weftSum, 0});
    }
    return list;
  };
  const std::vector<weftResult_t> results =
      manyThenOneByOne(g, list, [&](int r, bool viaMany) { return opsFor(r, viaMany ? many[r] : single[r]); });
  for (int r = 0; r < p; ++r) {
    ASSERT_EQ(results[r], weftSuccess) << "rank " << r << ": " << g.ops()->lastError(g.comm(r));
    for (size_t k = 0; k < counts.size(); ++k) {
      ASSERT_EQ(std::memcmp(many[r][k].data(), single[r][k].data(), many[r][k].size() * sizeof(float)), 0)
          << "rank " << r << " op " << k;
      if (k == 3) continue;
      for (size_t i = 0; i < counts[k]; ++i) {
        double want = 0;
        for (int q = 0; q < p; ++q) want += in[q][k][i];
        ASSERT_NEAR(many[r][k][i], want, 1e-4 * (1 + std::fabs(want))) << "rank " << r << " op " << k;
      }
    }
  }
}

// runMany's batches of AllGathers and of ReduceScatters, staged and direct (float sum and max; in place and
// not; an empty call with NULL buffers; a direct call alone) against a sequential reference, and bit for
// bit what the calls give one by one.
TEST(NodeBackend, ManyGathersAndScattersMatchReference) {
  const weftBackendListOps_v1* list = listOps();
  ASSERT_NE(list, nullptr);
  struct Call {
    weftCollType_t coll;
    size_t count;  // weft.h's: AllGather's sendcount, ReduceScatter's recvcount
    weftRedOp_t op;
    bool inPlace;
  };
  const std::vector<Call> calls = {
      {weftCollAllGather, 5, weftSum, false},       {weftCollAllGather, 0, weftSum, false},
      {weftCollAllGather, 100, weftSum, true},      {weftCollAllGather, 300, weftSum, false},
      {weftCollAllGather, 20000, weftSum, false},  // three not staged: a direct batch
      {weftCollAllGather, 30001, weftSum, true},    {weftCollAllGather, 25000, weftSum, false},
      {weftCollAllGather, 7, weftSum, true},        {weftCollReduceScatter, 7, weftSum, false},
      {weftCollReduceScatter, 64, weftSum, true},   {weftCollReduceScatter, 6000, weftSum, false},  // direct
      {weftCollReduceScatter, 7001, weftSum, true}, {weftCollReduceScatter, 64, weftMax, false},
      {weftCollReduceScatter, 0, weftMax, false},   {weftCollReduceScatter, 900, weftMax, true},
      {weftCollReduceScatter, 9000, weftMax, false}};  // direct, alone
  NodeGroup g(3);
  const int p = g.size();
  const auto ranks = static_cast<size_t>(p);
  auto inBytes = [&](const Call& c) { return c.coll == weftCollReduceScatter ? c.count * ranks : c.count; };
  auto outBytes = [&](const Call& c) { return c.coll == weftCollAllGather ? c.count * ranks : c.count; };
  // in[r][k]: rank r's input to call k; an in-place call works in out[r][k] (AllGather: its block r holds the
  // input; ReduceScatter: the output is the input's block r).
  std::vector<std::vector<std::vector<float>>> in(p), many(p), single(p);
  for (int r = 0; r < p; ++r) {
    for (size_t k = 0; k < calls.size(); ++k) {
      in[r].emplace_back(inBytes(calls[k]));
      for (size_t i = 0; i < in[r][k].size(); ++i)
        in[r][k][i] = input(r, i + 3 * k) * 0.37f + static_cast<float>(k);
      const size_t outSize =
          calls[k].inPlace ? std::max(inBytes(calls[k]), outBytes(calls[k])) : outBytes(calls[k]);
      many[r].emplace_back(outSize, -1.0f);
      single[r].emplace_back(outSize, -2.0f);
    }
  }
  auto opsFor = [&](int r, std::vector<std::vector<float>>& out) {
    std::vector<weftBackendOp_v1> ops;
    for (size_t k = 0; k < calls.size(); ++k) {
      const Call& c = calls[k];
      float* send = in[r][k].data();
      float* recv = out[k].data();
      if (c.count == 0) {
        send = recv = nullptr;
      } else if (c.inPlace && c.coll == weftCollAllGather) {
        send = recv + static_cast<size_t>(r) * c.count;
        std::copy(in[r][k].begin(), in[r][k].end(), send);
      } else if (c.inPlace) {
        std::copy(in[r][k].begin(), in[r][k].end(), recv);
        send = recv;
        recv += static_cast<size_t>(r) * c.count;
      }
      ops.push_back({c.coll, send, recv, c.count, weftFloat32, c.op, 0});
    }
    return ops;
  };
  const std::vector<weftResult_t> results =
      manyThenOneByOne(g, list, [&](int r, bool viaMany) { return opsFor(r, viaMany ? many[r] : single[r]); });
  for (int r = 0; r < p; ++r) {
    ASSERT_EQ(results[r], weftSuccess) << "rank " << r << ": " << g.ops()->lastError(g.comm(r));
    for (size_t k = 0; k < calls.size(); ++k) {
      const Call& c = calls[k];
      if (c.count == 0) continue;  // nothing to compare (and no buffer to compare it in)
      ASSERT_EQ(std::memcmp(many[r][k].data(), single[r][k].data(), many[r][k].size() * sizeof(float)), 0)
          << "rank " << r << " call " << k;
      const size_t at = c.inPlace && c.coll == weftCollReduceScatter ? static_cast<size_t>(r) * c.count : 0;
      for (size_t i = 0; i < outBytes(c); ++i) {
        double want = 0;
        if (c.coll == weftCollAllGather) {
          want = in[i / c.count][k][i % c.count];
        } else {
          for (int q = 0; q < p; ++q) {
            const double x = in[q][k][static_cast<size_t>(r) * c.count + i];
            want = q == 0 ? x : c.op == weftMax ? std::max(want, x) : want + x;
          }
        }
        ASSERT_NEAR(many[r][k][at + i], want, 1e-4 * (1 + std::fabs(want))) << "rank " << r << " call " << k;
      }
    }
  }
}

TEST(NodeBackend, ListDeclinesWhatItDoesNotRun) {
  const weftBackendListOps_v1* list = listOps();
  ASSERT_NE(list, nullptr);
  NodeGroup g(2);
  weftBackendOp_v1 small{weftCollAllReduce, nullptr, nullptr, 16, weftFloat32, weftSum, 0};  // staged size
  weftBackendOp_v1 gather{weftCollAllGather, nullptr, nullptr, 1 << 20, weftFloat32, weftSum, 0};
  EXPECT_EQ(list->supportsList(g.comm(0), &small), 0);
  EXPECT_EQ(list->supportsList(g.comm(0), &gather), 0);
  EXPECT_EQ(list->supportsList(nullptr, &small), 0);
  weftBackendOp_v1 large{weftCollAllReduce, nullptr, nullptr, 1 << 20, weftFloat32, weftSum, 0};
  EXPECT_EQ(list->runList(g.comm(0), &large, nullptr, 3), weftInvalidArgument);
}

const weftBackendCopiedInputOps_v1* copiedInputOps() {
  static const weftBackendCopiedInputOps_v1* table =
      pluginTable<weftBackendCopiedInputOps_v1>(WEFT_BACKEND_COPIED_INPUT_SYMBOL_V1);
  return table;
}

// The copied-input extension: an AllGather run from a copy of the input leaves the rank's own block of the
// output as it is, and the peers read the copy. The own blocks hold a marker instead of the input here, so a
// backend that wrote its own block, or read a peer's output instead of its copy, fails. Rank 0 runs the same
// call out of place from its copy (run), as Weft does where the plugin lacks the extension: both ways mix.
// Staged (1000 floats), direct by CMA (70000), and direct from copies in the plugin's memory (mapped).
TEST(NodeBackend, AllGatherFromACopyLeavesTheOwnBlock) {
  const weftBackendCopiedInputOps_v1* copied = copiedInputOps();
  ASSERT_NE(copied, nullptr) << WEFT_BACKEND_COPIED_INPUT_SYMBOL_V1 " not exported";
  ASSERT_EQ(copied->abiVersion, 1u);
  constexpr float kMarker = -999.0f;
  NodeGroup g(3);
  const int p = g.size();
  for (const auto& [count, mapped] :
       {std::pair{size_t{1000}, false}, {size_t{70000}, false}, {size_t{70000}, true}}) {
    std::vector<std::vector<float>> heap(p, std::vector<float>(count));
    std::optional<SharedBuffers> shared;
    if (mapped) shared.emplace(p, count * sizeof(float));
    std::vector<float*> copies = mapped ? shared->all() : pointers(heap);
    std::vector<std::vector<float>> recv(p, std::vector<float>(count * p, 0.0f));
    for (int r = 0; r < p; ++r) {
      for (size_t i = 0; i < count; ++i) copies[r][i] = input(r, i);
      std::fill_n(recv[r].data() + r * count, count, kMarker);
    }
    std::vector<weftResult_t> results(p, weftInternalError);
    std::vector<std::thread> threads;
    for (int r = 0; r < p; ++r) {
      threads.emplace_back([&, r] {
        weftBackendOp_v1 op{weftCollAllGather, copies[r], recv[r].data(), count, weftFloat32, weftSum, 0};
        if (g.ops()->supports(g.comm(r), &op) == 0) return;
        results[r] = r == 0 ? g.ops()->run(g.comm(r), &op) : copied->runFromCopy(g.comm(r), &op);
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < p; ++r) {
      ASSERT_EQ(results[r], weftSuccess) << "rank " << r << ": " << g.ops()->lastError(g.comm(r));
      for (int q = 0; q < p; ++q) {
        for (size_t i = 0; i < count; ++i) {
          const float want = q == r && r != 0 ? kMarker : input(q, i);
          ASSERT_EQ(recv[r][q * count + i], want)
              << "rank " << r << " block " << q << " index " << i << " of " << count;
        }
      }
    }
  }
  weftBackendOp_v1 reduce{weftCollAllReduce, nullptr, nullptr, 16, weftFloat32, weftSum, 0};
  EXPECT_EQ(copied->runFromCopy(g.comm(0), &reduce), weftInvalidArgument);
  EXPECT_NE(std::string(g.ops()->lastError(g.comm(0))).find("allreduce"), std::string::npos)
      << g.ops()->lastError(g.comm(0));
  EXPECT_EQ(copied->runFromCopy(nullptr, &reduce), weftInvalidArgument);
}

// With the default settings, 4 floats: inline; 1000: staged, every rank reduces; 6000: AllReduce staged and
// sliced, the others direct; 300000: direct (CMA).
INSTANTIATE_TEST_SUITE_P(Paths, NodeCollectives, ::testing::Values(4, 48, 1000, 6000, 300000));

// A float that another thread's process_vm_readv may be writing as this one reads it: DirectCopies watches an
// output fill on purpose, reading through volatile as one watches memory a device writes. That is no
// synchronisation ThreadSanitizer could see (the results are checked after the threads are joined), so the
// read is left uninstrumented.
__attribute__((no_sanitize("thread"))) float peekWhileWritten(const float* at) {
  return *static_cast<const volatile float*>(at);
}

// Direct AllToAll and AllGather (CMA) copy each peer's block as soon as that peer has called, not after all
// have (shm_node_colls.cpp, forEachPeerAsItArrives): rank 2 calls only once ranks 0 and 1 hold each other's
// blocks, or after 10 s without them (which fails the test, and then still completes the collective).
class DirectCopies : public ::testing::TestWithParam<weftCollType_t> {};

TEST_P(DirectCopies, ReadEachPeerAsItArrives) {
  const weftCollType_t coll = GetParam();
  constexpr int kRanks = 3;
  constexpr size_t kBlock = 65536;  // floats: 256 KiB blocks, direct for both collectives
  NodeGroup g(kRanks);
  if (!cmaWorksHere()) GTEST_SKIP() << "CMA is not available here: no direct path";
  const size_t sendCount = coll == weftCollAllToAll ? kRanks * kBlock : kBlock;
  auto value = [](int rank, size_t i) {
    return static_cast<float>((static_cast<size_t>(rank) * 31 + i) % 997) + 1.0f;
  };
  std::vector<std::vector<float>> send(kRanks, std::vector<float>(sendCount));
  std::vector<std::vector<float>> recv(kRanks, std::vector<float>(kRanks * kBlock, 0.0f));
  for (int r = 0; r < kRanks; ++r) {
    for (size_t i = 0; i < sendCount; ++i) send[r][i] = value(r, i);
  }
  auto from = [&](int r) { return coll == weftCollAllToAll ? r * kBlock : 0; };  // r's block of each input
  // Whether the last element of rank q's block has landed in rank r's output (written by the kernel's CMA
  // copy while this thread looks).
  auto landed = [&](int r, int q) {
    return peekWhileWritten(&recv[r][q * kBlock + kBlock - 1]) == send[q][from(r) + kBlock - 1];
  };
  bool copiedBeforeLast = false;
  auto results = g.run([&](int r) {
    if (r == kRanks - 1) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!(landed(0, 1) && landed(1, 0)) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      copiedBeforeLast = landed(0, 1) && landed(1, 0);
    }
    return weftBackendOp_v1{coll, send[r].data(), recv[r].data(), kBlock, weftFloat32, weftSum, 0};
  });
  for (int r = 0; r < kRanks; ++r) ASSERT_EQ(results[r], weftSuccess) << g.ops()->lastError(g.comm(r));
  EXPECT_TRUE(copiedBeforeLast) << "ranks 0 and 1 waited for rank 2 before copying each other's blocks";
  for (int r = 0; r < kRanks; ++r) {
    for (int q = 0; q < kRanks; ++q) {
      for (size_t i = 0; i < kBlock; ++i) {
        ASSERT_EQ(recv[r][q * kBlock + i], send[q][from(r) + i])
            << "rank " << r << " block " << q << " index " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Collectives, DirectCopies, ::testing::Values(weftCollAllToAll, weftCollAllGather),
                         [](const ::testing::TestParamInfo<weftCollType_t>& info) {
                           return std::string(info.param == weftCollAllToAll ? "AllToAll" : "AllGather");
                         });

TEST(NodeBackend, MismatchedCollectivesFailOnEveryRank) {
  NodeGroup g(2);
  std::vector<float> a(64), b(128);
  auto results = g.run([&](int r) {
    return r == 0 ? weftBackendOp_v1{weftCollAllReduce, a.data(), a.data(), 16, weftFloat32, weftSum, 0}
                  : weftBackendOp_v1{weftCollAllGather, b.data(), b.data(), 16, weftFloat32, weftSum, 0};
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], weftInvalidUsage);
    std::string why = g.ops()->lastError(g.comm(r));
    EXPECT_NE(why.find("mismatched"), std::string::npos) << why;
  }
}

// A direct batch whose calls differ between ranks (same total, split differently) fails on every rank.
TEST(NodeBackend, MismatchedDirectBatchFailsOnEveryRank) {
  const weftBackendListOps_v1* list = listOps();
  ASSERT_NE(list, nullptr);
  NodeGroup g(2);
  std::vector<std::vector<float>> send(2, std::vector<float>(50000, 1.0f)), recv(2, std::vector<float>(100000));
  std::vector<weftResult_t> results(2, weftInternalError);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      const size_t first = r == 0 ? 20000 : 30000;  // then the rest of 50000
      const weftBackendOp_v1 ops[2] = {
          {weftCollAllGather, send[r].data(), recv[r].data(), first, weftFloat32, weftSum, 0},
          {weftCollAllGather, send[r].data() + first, recv[r].data() + 2 * first, 50000 - first, weftFloat32,
           weftSum, 0}};
      results[r] = list->runMany(g.comm(r), ops, 2);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], weftInvalidUsage);
    std::string why = g.ops()->lastError(g.comm(r));
    EXPECT_NE(why.find("mismatched"), std::string::npos) << why;
  }
}

TEST(NodeBackend, SilentPeerTimesOut) {
  NodeGroup g(2, /*timeoutSeconds=*/1);
  std::vector<float> a(16);
  weftBackendOp_v1 op{weftCollAllReduce, a.data(), a.data(), 16, weftFloat32, weftSum, 0};
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(g.ops()->run(g.comm(0), &op), weftTimeout);  // rank 1 never calls
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(seconds, 0.9);
  EXPECT_LT(seconds, 10.0);
  std::string why = g.ops()->lastError(g.comm(0));
  EXPECT_NE(why.find("rank(s) 1"), std::string::npos) << why;
}

TEST(NodeBackend, AbortEndsAWait) {
  std::atomic<int> aborted{0};
  NodeGroup g(2, /*timeoutSeconds=*/60, &aborted);
  std::vector<float> a(16);
  weftBackendOp_v1 op{weftCollAllReduce, a.data(), a.data(), 16, weftFloat32, weftSum, 0};
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    aborted = 1;
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(g.ops()->run(g.comm(0), &op), weftInvalidUsage);  // rank 1 never calls; the abort ends the wait
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  aborter.join();
  EXPECT_LT(seconds, 2.0);
  EXPECT_NE(std::string(g.ops()->lastError(g.comm(0))).find("aborted"), std::string::npos);
}

// A rank that waits long sleeps on its doorbell (after 200 us of spinning and yielding), and the peer rings
// it. Here the peer finds the sleeper's first step already published: in a one-step AllReduce (2 floats) it
// never waits and rings when its collective ends; in a two-step one (6000 floats: a slice each, then all
// copy) it rings before it waits for the sleeper's second step. Rung, the sleeper returns within a fraction
// of a millisecond (a few on a loaded machine); a missed ring would leave it asleep to the end of its 10 ms
// slice (about 8 ms after the peer's call), and the peer waiting that long too.
class SleeperRung : public ::testing::TestWithParam<size_t> {};

TEST_P(SleeperRung, ReturnsSoonAfterThePeersCall) {
  NodeGroup g(2);
  const size_t n = GetParam();
  constexpr int kTrials = 15;
  std::vector<double> delaysMs;
  for (int t = 0; t < kTrials; ++t) {
    std::vector<float> in0(n), in1(n), out0(n), out1(n);
    for (size_t i = 0; i < n; ++i) {
      in0[i] = static_cast<float>(i % 97);
      in1[i] = static_cast<float>(1000 + i % 89);
    }
    weftResult_t waiterResult = weftInternalError;
    std::chrono::steady_clock::time_point waiterDone;
    std::thread waiter([&] {
      weftBackendOp_v1 op{weftCollAllReduce, in1.data(), out1.data(), n, weftFloat32, weftSum, 0};
      waiterResult = g.ops()->run(g.comm(1), &op);
      waiterDone = std::chrono::steady_clock::now();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the waiter is asleep by now
    const auto start = std::chrono::steady_clock::now();
    weftBackendOp_v1 op{weftCollAllReduce, in0.data(), out0.data(), n, weftFloat32, weftSum, 0};
    ASSERT_EQ(g.ops()->run(g.comm(0), &op), weftSuccess) << g.ops()->lastError(g.comm(0));
    waiter.join();
    ASSERT_EQ(waiterResult, weftSuccess) << g.ops()->lastError(g.comm(1));
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(out0[i], in0[i] + in1[i]) << i;
      ASSERT_EQ(out1[i], in0[i] + in1[i]) << i;
    }
    delaysMs.push_back(std::chrono::duration<double, std::milli>(waiterDone - start).count());
  }
  std::sort(delaysMs.begin(), delaysMs.end());
  EXPECT_LT(delaysMs[kTrials / 2], 6.0) << "median ms from the peer's call to the sleeper's return";
}

INSTANTIATE_TEST_SUITE_P(OneAndTwoSteps, SleeperRung, ::testing::Values(size_t{2}, size_t{6000}));

TEST(NodeBackend, BadArguments) {
  const weftBackendOps_v1* ops = plugin()->backend;
  ASSERT_NE(ops, nullptr);
  void* ctx = nullptr;
  ASSERT_EQ(plugin()->init(&kHost, &ctx), weftSuccess);
  unsigned char address[WEFT_BACKEND_ADDRESS_BYTES];
  void* comm = nullptr;
  weftBackendComm_v1 info{0, 2, 1.0, floatKernel, nullptr, nullptr};
  EXPECT_EQ(ops->commPrepare(nullptr, &info, address, &comm), weftInvalidArgument);
  EXPECT_EQ(ops->commPrepare(ctx, nullptr, address, &comm), weftInvalidArgument);
  weftBackendComm_v1 noKernel{0, 2, 1.0, nullptr, nullptr, nullptr};
  EXPECT_EQ(ops->commPrepare(ctx, &noKernel, address, &comm), weftInvalidArgument);
  weftBackendComm_v1 badRank{2, 2, 1.0, floatKernel, nullptr, nullptr};
  EXPECT_EQ(ops->commPrepare(ctx, &badRank, address, &comm), weftInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(ops->commConnect(nullptr, address), weftInvalidArgument);
  EXPECT_EQ(ops->supports(nullptr, nullptr), 0);
  EXPECT_EQ(ops->run(nullptr, nullptr), weftInvalidArgument);
  EXPECT_NE(ops->lastError(nullptr), nullptr);
  EXPECT_EQ(ops->commDestroy(nullptr), weftSuccess);
  // An address from something else is refused at connect, not trusted.
  ASSERT_EQ(ops->commPrepare(ctx, &info, address, &comm), weftSuccess);
  std::vector<unsigned char> garbage(2 * WEFT_BACKEND_ADDRESS_BYTES, 0xab);
  std::memcpy(garbage.data(), address, WEFT_BACKEND_ADDRESS_BYTES);
  EXPECT_NE(ops->commConnect(comm, garbage.data()), weftSuccess);
  EXPECT_NE(std::string(ops->lastError(comm)).find("rank 1"), std::string::npos);
  ops->commDestroy(comm);
  plugin()->finalize(ctx);
}

}  // namespace
