// A lane's reported memory (LaneState::bytesHeld, summed into a plan's resourceBytes) counts every buffer it
// keeps between collectives, the transfers' own vectors and the fusion buffers included; the fusion buffers
// are host memory (HostBuffer), grown on demand and given back.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>

#include <cstring>
#include <utility>

#include "core/comm/lane.h"
#include "core/common/error.h"

namespace weft {
namespace {

TEST(LaneState, BytesHeldCountsWhatTransfersAndFusedCallsKeep) {
  LaneState lane(0);
  const size_t empty = lane.bytesHeld();
  EXPECT_GE(empty, sizeof(LaneState));

  lane.storage.transfers.emplace_back();
  ChannelTransfer& transfer = lane.storage.transfers.back();
  transfer.bounce.reserve(size_t{1} << 20);  // a bounce buffer kept from a vectored message
  transfer.pieces.reserve(100);
  lane.fusedCalls.reserve(1000);
  lane.scratch[1].reserve(4096);
  lane.fusionBuffers[0].reserve(size_t{512} << 10);

  const size_t kept = sizeof(ChannelTransfer) + transfer.bounce.capacity() +
                      transfer.pieces.capacity() * sizeof(weftTransportIov_v1) +
                      lane.fusedCalls.capacity() * sizeof(FusedCall) + lane.scratch[1].capacity() +
                      (size_t{512} << 10);
  EXPECT_EQ(lane.bytesHeld(), empty + kept);
}

// A HostBuffer keeps its memory while large enough, gives the old memory back when it grows or dies, and
// hands it over when moved: giving back any of those pointers again is refused as freed already.
TEST(HostBuffer, GrowsKeepsAndGivesBackItsMemory) {
  auto freedAlready = [](void* memory) {
    try {
      freeHostMemory(memory);
    } catch (const Error& e) {
      return e.code() == weftInvalidArgument && std::strstr(e.what(), "freed already") != nullptr;
    }
    return false;
  };
  unsigned char* first = nullptr;
  unsigned char* second = nullptr;
  {
    HostBuffer buffer;
    EXPECT_EQ(buffer.capacity(), 0u);
    first = buffer.reserve(1000);
    ASSERT_NE(first, nullptr);
    std::memset(first, 0xab, 1000);
    EXPECT_EQ(buffer.reserve(10), first);  // large enough: kept
    EXPECT_EQ(buffer.capacity(), 1000u);
    second = buffer.reserve(size_t{3} << 20);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(buffer.capacity(), size_t{3} << 20);
    second[(size_t{3} << 20) - 1] = 1;  // all of it usable
    // isHostMemory: ranges within the buffer, not past its end, not other memory.
    EXPECT_TRUE(isHostMemory(second, size_t{3} << 20));
    EXPECT_TRUE(isHostMemory(second + 4096, 4096));
    EXPECT_FALSE(isHostMemory(second + 1, size_t{3} << 20));
    EXPECT_FALSE(isHostMemory(&buffer, 1));
    EXPECT_TRUE(freedAlready(first)) << "the smaller buffer was not given back when the buffer grew";
    HostBuffer moved(std::move(buffer));
    EXPECT_EQ(moved.capacity(), size_t{3} << 20);
    EXPECT_EQ(buffer.capacity(), 0u);  // NOLINT(bugprone-use-after-move): moved from on purpose
    EXPECT_EQ(moved.reserve(1), second);
  }
  EXPECT_TRUE(freedAlready(second)) << "the buffer was not given back when it died";
}

// When the plugin cannot make more host memory, a HostBuffer still gets memory, plain memory the peers cannot
// map, so that collectives keep running. Here the plugin's memfd cannot be sized: a file size limit of 0 (the
// kernel's SIGXFSZ ignored, so that ftruncate fails with EFBIG instead). Not "no file descriptor left", which
// is as real: under UBSan the first check of an object's dynamic type opens a pipe, and without descriptors it
// reports every such object as having an invalid vptr.
TEST(HostBuffer, PlainMemoryWhenThePluginCannotMakeMore) {
  freeHostMemory(allocateHostMemory(4096));  // the plugins loaded while they can still make memory
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit none = old;
  none.rlim_cur = 0;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction oldAction {};
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &oldAction), 0);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &none), 0);
  bool pluginRefused = false;
  try {
    freeHostMemory(allocateHostMemory(4096));
  } catch (const Error&) {
    pluginRefused = true;
  }
  HostBuffer buffer;
  unsigned char* memory = buffer.reserve(size_t{1} << 20);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  ASSERT_EQ(sigaction(SIGXFSZ, &oldAction, nullptr), 0);
  EXPECT_TRUE(pluginRefused) << "the memory plugin made a buffer it could not size (or none was loaded)";
  ASSERT_NE(memory, nullptr);
  memory[(size_t{1} << 20) - 1] = 1;
  EXPECT_TRUE(isHostMemory(memory, size_t{1} << 20));
}

}  // namespace
}  // namespace weft
