// weftStream's queue (core/stream): tasks run once each, in the order queued, while the ring grows and wraps
// around; a task's captures are destroyed once it has run; StreamTask moves its callable along.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/stream/stream.h"
#include "core/stream/stream_task.h"

namespace {

TEST(StreamQueue, RunsEveryTaskOnceInOrderAcrossGrowthAndWrapAround) {
  weftStream stream;
  std::mutex mutex;
  std::vector<int> ran;
  int expected = 0;
  // Bursts of different lengths: the ring grows past 8, 16, 32 entries and wraps around between bursts.
  for (int burst : {3, 9, 1, 40, 7, 64, 2}) {
    for (int i = 0; i < burst; ++i) {
      const int number = expected++;
      stream.enqueue([&mutex, &ran, number] {
        std::lock_guard lock(mutex);
        ran.push_back(number);
      });
    }
    stream.synchronize();
  }
  ASSERT_EQ(static_cast<int>(ran.size()), expected);
  for (int i = 0; i < expected; ++i) EXPECT_EQ(ran[i], i) << "task " << i << " ran out of order";
}

TEST(StreamQueue, ATasksCapturesAreReleasedAfterItRuns) {
  auto shared = std::make_shared<int>(7);
  std::atomic<int> seen{0};
  {
    weftStream stream;
    stream.enqueue([shared, &seen] { seen = *shared; });
    stream.synchronize();
    stream.enqueue([] {});  // the worker has moved on past the first task
    stream.synchronize();
    EXPECT_EQ(seen.load(), 7);
    EXPECT_EQ(shared.use_count(), 1) << "the queue still holds the first task's copy";
  }
}

TEST(StreamTask, MovesItsCallableAndRunsItOnce) {
  int calls = 0;
  weft::StreamTask a([&calls] { ++calls; });
  weft::StreamTask b(std::move(a));
  EXPECT_FALSE(static_cast<bool>(a));  // NOLINT(bugprone-use-after-move): moved-from is documented empty
  ASSERT_TRUE(static_cast<bool>(b));
  b();
  EXPECT_EQ(calls, 1);
  weft::StreamTask c;
  c = std::move(b);
  c();
  EXPECT_EQ(calls, 2);
}

}  // namespace
