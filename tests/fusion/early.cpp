// 11. Full buckets go before the group's end: in size mode, once a bucket is full, weftCommGetStats shows
// its launch while the group is still open, and the results are those of the unfused calls. On the NULL
// stream (a background thread runs the early buckets; weftGroupEnd waits for them) and on a created stream.
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "fusion_test.h"

namespace fusiontest {
namespace {

unsigned long long launchesSoFar(weftComm_t comm) {
  weftCommStats_t stats = WEFT_COMM_STATS_INITIALIZER;
  colltest::expectOk(weftCommGetStats(comm, &stats), "weftCommGetStats");
  return stats.collectivesLaunched;
}

void expectLaunches(Context& ctx, const char* when, unsigned long long got, unsigned long long want) {
  if (got == want) return;
  ++ctx.report.failures;
  std::fprintf(stderr, "rank %d: early launch %s: %llu launches, expected %llu\n", ctx.view.rank, when, got, want);
}

void earlyOn(Context& ctx, weftStream_t stream) {
  constexpr int kCalls = 8;
  constexpr size_t kCount = (256 << 10) / sizeof(float);  // 4 calls fill a 1 MiB bucket
  weftComm_t comm = ctx.view.comm;
  apply(comm, weftCollAllReduce, Setting{weftFusionSize, size_t{1} << 20, {}});
  std::vector<std::vector<float>> buffers(kCalls, std::vector<float>(kCount));
  for (int i = 0; i < kCalls; ++i) {
    for (size_t e = 0; e < kCount; ++e) buffers[i][e] = static_cast<float>(ctx.view.rank + i + e % 7);
  }
  const unsigned long long before = launchesSoFar(comm);
  colltest::expectOk(weftGroupStart(), "weftGroupStart");
  for (int i = 0; i < kCalls; ++i) {
    colltest::expectOk(
        weftAllReduce(buffers[i].data(), buffers[i].data(), kCount, weftFloat32, weftSum, comm, stream),
        "weftAllReduce");
    if (i == 2) expectLaunches(ctx, "after 3 of 4 calls", launchesSoFar(comm) - before, 0);
    if (i == 3) expectLaunches(ctx, "after the bucket filled", launchesSoFar(comm) - before, 1);
  }
  expectLaunches(ctx, "before weftGroupEnd", launchesSoFar(comm) - before, 2);
  colltest::expectOk(weftGroupEnd(), "weftGroupEnd");
  if (stream != nullptr) colltest::expectOk(weftStreamSynchronize(stream), "weftStreamSynchronize");
  expectLaunches(ctx, "after weftGroupEnd", launchesSoFar(comm) - before, 2);

  // Small integers: the float sums are exact whatever the order.
  const double n = ctx.view.size;
  for (int i = 0; i < kCalls; ++i) {
    for (size_t e = 0; e < kCount; ++e) {
      const double want = n * (n - 1) / 2 + n * static_cast<double>(i + e % 7);
      ++ctx.report.elements;
      if (buffers[i][e] == static_cast<float>(want)) continue;
      if (++ctx.report.failures <= 5) {
        std::fprintf(stderr, "rank %d: early launch, call %d element %zu: %g, expected %g\n", ctx.view.rank, i, e,
                     static_cast<double>(buffers[i][e]), want);
      }
    }
    ++ctx.report.calls;
  }
  apply(comm, weftCollAllReduce, Setting{});
}

}  // namespace

void caseEarly(Context& ctx) {
  earlyOn(ctx, nullptr);
  earlyOn(ctx, ctx.stream);
}

}  // namespace fusiontest
