#include "shm_doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

namespace weft::shm {

// The futex calls are not FUTEX_PRIVATE: the word lives in a mapping shared by two processes.
void ringDoorbell(DoorbellPage* page) {
  if (page == nullptr) return;
  // Pairs with the fence in DoorbellSleep: either the sleeper sees our published change in its check, or we
  // see it counted in sleepers here.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  ringDoorbellAfterFence(page);
}

void ringDoorbellAfterFence(DoorbellPage* page) {
  if (page->sleepers.load(std::memory_order_relaxed) == 0) return;
  page->seq.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&page->seq), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

DoorbellSleep::DoorbellSleep(DoorbellPage* page) : page_(page) {
  page_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  seq_ = page_->seq.load(std::memory_order_seq_cst);
}

DoorbellSleep::~DoorbellSleep() { page_->sleepers.fetch_sub(1, std::memory_order_relaxed); }

bool DoorbellSleep::sleep(int timeoutUs) {
  timespec timeout{timeoutUs / 1000000, static_cast<long>(timeoutUs % 1000000) * 1000};
  long r = syscall(SYS_futex, reinterpret_cast<uint32_t*>(&page_->seq), FUTEX_WAIT, seq_, &timeout, nullptr, 0);
  return r == 0 || errno != ETIMEDOUT;  // EAGAIN: rung between prepare and sleep; EINTR: let the caller look
}

}  // namespace weft::shm
