// copyBytes (plugins/common/copy_bytes.h) against the source bytes, at every distance modulo 4 KiB that
// takes its own loop (1-63) and some that take memcpy, for sizes around both of its thresholds, with guard
// bytes on both sides of the destination; streamBytes the same, at every alignment of the destination.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plugins/common/copy_bytes.h"

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kGuard = 64;
constexpr unsigned char kPoison = 0xA5;

using Copy = void (*)(void*, const void*, size_t);

// `bytes` copied by `copy` to a destination `distance` bytes (modulo a page) past a page-aligned source; true
// when the destination holds exactly the source's bytes and nothing around it changed.
::testing::AssertionResult copiesExactly(size_t bytes, size_t distance, Copy copy = weft::copyBytes) {
  std::vector<unsigned char> from(bytes + 2 * kPage);
  std::vector<unsigned char> to(bytes + 4 * kPage, kPoison);
  auto pageAligned = [](unsigned char* p) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    return p + (kPage - address % kPage) % kPage;
  };
  unsigned char* src = pageAligned(from.data());
  unsigned char* dst = pageAligned(to.data()) + kPage + distance;  // kPage of guard room before
  for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>((i * 131 + bytes + distance) % 251);
  copy(dst, src, bytes);
  if (copy == weft::streamBytes) weft::streamFence();
  for (size_t i = 0; i < bytes; ++i) {
    if (dst[i] != src[i]) {
      return ::testing::AssertionFailure() << bytes << " bytes at distance " << distance << ": byte " << i
                                           << " is " << int{dst[i]} << ", the source's " << int{src[i]};
    }
  }
  for (size_t i = 1; i <= kGuard; ++i) {
    if (dst[-static_cast<ptrdiff_t>(i)] != kPoison || dst[bytes + i - 1] != kPoison) {
      return ::testing::AssertionFailure()
             << bytes << " bytes at distance " << distance << ": wrote outside, " << i << " bytes away";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(CopyBytes, EveryDistanceAndSizeCopiesExactly) {
  std::vector<size_t> everyDistance;  // 0-70 and a few far ones
  for (size_t d = 0; d <= 70; ++d) everyDistance.push_back(d);
  for (size_t d : {100, 2048, 4032, 4080, 4095}) everyDistance.push_back(d);
  for (size_t bytes : {0, 1, 63, 64, 65, 2047, 2048, 2049, 4096, 4099, 65536 + 7}) {
    for (size_t distance : everyDistance) EXPECT_TRUE(copiesExactly(bytes, distance));
  }
  // Larger copies at the window's edges and inside it (each costs a few MB of checking under a sanitizer).
  for (size_t bytes : {size_t{300000}, (size_t{1} << 20) - 1, size_t{1} << 20}) {
    for (size_t distance : {0, 1, 16, 31, 32, 63, 64, 4080}) EXPECT_TRUE(copiesExactly(bytes, distance));
  }
}

// The streaming copy: a head up to the destination's 16-byte boundary, 64 bytes a step, a tail; every
// alignment of the destination and sizes around each part.
TEST(StreamBytes, EveryAlignmentAndSizeCopiesExactly) {
  for (size_t bytes : {0, 1, 15, 16, 17, 63, 64, 65, 79, 80, 127, 128, 4096, 4096 + 7, 65536 + 3}) {
    for (size_t distance = 0; distance < 64; ++distance) {
      EXPECT_TRUE(copiesExactly(bytes, distance, weft::streamBytes));
    }
  }
  EXPECT_TRUE(copiesExactly((size_t{1} << 20) + 5, 16 + 3, weft::streamBytes));
}

}  // namespace
