// copyBytes: memcpy, except where glibc's memcpy falls into a page-aliasing stall; streamBytes: a copy whose
// stores bypass the caches.
//
// For copies of about 2 KiB to 512 KiB glibc (2.36, Debian 12) copies with `rep movsb`, which on AMD Zen 3 and
// later runs ten to twenty times slower when the destination lies a few bytes past the source modulo 4 KiB
// (glibc bug 30994, for which later glibc releases stopped using it on those CPUs). Weft's staging areas,
// bounce and fusion buffers and weftMemAlloc memory start on pages, and a buffer from plain malloc of 128 KiB
// or more starts 16 bytes past one: every copy from ours into such a buffer hit it. Measured on the 2-vCPU AMD
// EPYC Zen 3 box (2026-11-29): 64 KiB with the destination 4-28 bytes past the source modulo 4 KiB took 30-55 us
// against 2-4 us at any other distance, 256 KiB 94-99 us against 7-13 us; a loop of 16-byte loads and stores took
// 3.3-5.3 us and 8-13 us at every distance. In commperf on malloc'd buffers (np 2) Weft's AllReduce of 64 KiB
// and 256 KiB read 0.38 and 0.44 of Open MPI's speed, its Broadcast of 64 KiB 0.23 and AllGather 0.34.
//
// Header-only and free of core/ like the rest of plugins/common; core includes it too, as the workaround
// belongs to neither side of the plugin ABI.
#ifndef WEFT_PLUGINS_COMMON_COPY_BYTES_H
#define WEFT_PLUGINS_COMMON_COPY_BYTES_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace weft {

namespace copy_detail {

// Distances (destination minus source, modulo 4 KiB) in [1, kAliasedBelow) stall `rep movsb` (measured: 1-28
// bytes; 32 is fast, 36-60 a third slower, which the loop below matches).
constexpr uintptr_t kAliasedBelow = 64;
// Sizes for which glibc takes `rep movsb`: from just above 2 KiB (2112 bytes on the Zen 3 box) up to its
// large-copy threshold (512 KiB there, the L2 cache; up to 1 MiB on CPUs with a larger L2), above which its
// own vector loops run at full speed at any distance.
constexpr size_t kMovsbFromBytes = 2048;
constexpr size_t kMovsbBelowBytes = size_t{1} << 20;

// 64 bytes a step in 16-byte loads and stores (SSE2: every x86-64), the tail by memcpy (under 64 bytes).
// kStreamed: non-temporal stores, for which dst must be 16-byte aligned.
template <bool kStreamed>
inline void copyByVectors(unsigned char* dst, const unsigned char* src, size_t bytes) {
  size_t done = 0;
#if defined(__x86_64__)
  auto store = [](unsigned char* to, __m128i v) {
    if constexpr (kStreamed) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(to), v);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to), v);
    }
  };
  for (; done + 64 <= bytes; done += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + done + 48));
    store(dst + done, a);
    store(dst + done + 16, b);
    store(dst + done + 32, c);
    store(dst + done + 48, d);
  }
#endif
  std::memcpy(dst + done, src + done, bytes - done);
}

}  // namespace copy_detail

// memcpy(dst, src, bytes) for buffers that do not overlap.
inline void copyBytes(void* dst, const void* src, size_t bytes) {
  using namespace copy_detail;
  const uintptr_t distance = (reinterpret_cast<uintptr_t>(dst) - reinterpret_cast<uintptr_t>(src)) % 4096;
  if (distance != 0 && distance < kAliasedBelow && bytes >= kMovsbFromBytes && bytes < kMovsbBelowBytes) {
    return copyByVectors<false>(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), bytes);
  }
  std::memcpy(dst, src, bytes);
}

// memcpy(dst, src, bytes) for buffers that do not overlap, with stores that bypass the caches (non-temporal),
// for results too large to stay in cache until their reader comes: the copy then writes each line once, where
// an ordinary store first reads the destination's line from memory. glibc's memcpy does the same from its own
// threshold, 3/4 of the shared cache, but it sees one call only (a fused collective copies its result out in
// thousands of small ones), and on this box's VM it reads that cache as 256 MiB. The stores are weakly ordered:
// call streamFence() after the last one, before anything tells another thread that the bytes are there.
inline void streamBytes(void* dst, const void* src, size_t bytes) {
  auto* to = static_cast<unsigned char*>(dst);
  const auto* from = static_cast<const unsigned char*>(src);
  const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(to) % 16) % 16);
  std::memcpy(to, from, head);  // up to the first 16-byte boundary of the destination
  copy_detail::copyByVectors<true>(to + head, from + head, bytes - head);
}

// From this many bytes of results written by the host's ranks together in one collective, Weft copies results
// into the application's buffers with streamBytes (core's fused and bounced collectives, the shm backend's own
// blocks and mapped peers' blocks): results that large do not stay in cache until the application reads them.
// Measured in fusion/fused_run.cpp, core/collectives/bounce.cpp and plugins/shm/shm_node_runner.h (below it,
// 2 MB at np 2, streaming a fused group's results was slower).
constexpr size_t kStreamFromHostBytes = size_t{8} << 20;

// Whether a collective whose `ranks` ranks of one host each write resultBytesPerRank of results streams them.
inline bool streamsResults(size_t resultBytesPerRank, size_t ranks) {
  return resultBytesPerRank * ranks >= kStreamFromHostBytes;
}

// Orders the streamBytes stores before every later store (an SFENCE).
inline void streamFence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

// One copy of results: streamBytes and its fence when `streamed`, else copyBytes.
inline void copyResult(void* dst, const void* src, size_t bytes, bool streamed) {
  if (!streamed) return copyBytes(dst, src, bytes);
  streamBytes(dst, src, bytes);
  streamFence();
}

}  // namespace weft

#endif  // WEFT_PLUGINS_COMMON_COPY_BYTES_H
