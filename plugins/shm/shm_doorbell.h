// A doorbell: one futex word per plugin context, in a small memfd that every peer of the context maps.
//
// waitReady() must sleep rather than spin (with more ranks than cores a spinning waiter takes the core of
// the rank it waits for), and a futex can wait on one word only. So each context has one doorbell, and a
// peer rings it after whatever might let the context progress: the sender after publishing data, the
// receiver after freeing ring space or finishing a CMA read. Ringing costs a fence and a load unless the
// owner is asleep; only then does it take the FUTEX_WAKE system call.
#ifndef WEFT_PLUGINS_SHM_DOORBELL_H
#define WEFT_PLUGINS_SHM_DOORBELL_H

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "shm_ring.h"

namespace weft::shm {

inline constexpr uint32_t kDoorbellMagic = 0x44534d57;  // "WMSD"
inline constexpr size_t kDoorbellBytes = 4096;

struct DoorbellPage {
  uint32_t magic;
  uint32_t reserved;
  alignas(kCacheLine) std::atomic<uint32_t> seq;       // the futex word: bumped by a ring that may wake
  alignas(kCacheLine) std::atomic<uint32_t> sleepers;  // owner threads inside waitReady
};
static_assert(sizeof(DoorbellPage) <= kDoorbellBytes);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// Call after the release store that publishes the change.
void ringDoorbell(DoorbellPage* page);
// The same without the fence, for callers that published their change with a sequentially consistent
// read-modify-write (which is a full fence already): one fence for many doorbells.
void ringDoorbellAfterFence(DoorbellPage* page);

// Sleeps on the owner's doorbell. Between prepare() and sleep() the caller checks whether anything is
// ready: a ring after prepare() either makes that check see the change or makes sleep() return at once.
class DoorbellSleep {
 public:
  explicit DoorbellSleep(DoorbellPage* page);
  ~DoorbellSleep();
  DoorbellSleep(const DoorbellSleep&) = delete;
  DoorbellSleep& operator=(const DoorbellSleep&) = delete;

  // Returns true when rung (or interrupted), false when the timeout passed.
  bool sleep(int timeoutUs);

 private:
  DoorbellPage* page_;
  uint32_t seq_;
};

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_DOORBELL_H
