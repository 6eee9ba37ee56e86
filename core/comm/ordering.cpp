#include "core/comm/ordering.h"

#include <algorithm>
#include <mutex>

#include "core/comm/comm.h"

namespace weft {
namespace {

bool turnCame(const Ticket& t) { return t.comm->executed.load(std::memory_order_acquire) == t.number; }

// Sleeps until ready(). A waiter is counted before it looks, and wakers look at the count after changing
// the counters (both sequentially consistent), so either the waiter sees the change or the waker sees the
// waiter and notifies it under the mutex.
template <typename Ready>
void sleepUntil(weftComm* comm, Ready ready) {
  std::unique_lock lock(comm->orderMutex);
  comm->orderWaiters.fetch_add(1);
  comm->orderChanged.wait(lock, ready);
  comm->orderWaiters.fetch_sub(1);
}

}  // namespace

Ticket issueTicket(weftComm* comm) { return {comm, comm->issued.fetch_add(1)}; }

std::vector<Ticket> issueTickets(const std::vector<weftComm*>& comms) {
  if (comms.size() == 1) return {issueTicket(comms.front())};
  static std::mutex issueMutex;
  std::lock_guard global(issueMutex);
  std::vector<Ticket> tickets;
  for (weftComm* comm : comms) {
    bool seen = std::any_of(tickets.begin(), tickets.end(), [&](const Ticket& t) { return t.comm == comm; });
    if (!seen) tickets.push_back({comm, comm->issued.fetch_add(1)});
  }
  return tickets;
}

void waitTurns(std::span<const Ticket> tickets) {
  for (const Ticket& t : tickets) {
    if (!turnCame(t)) sleepUntil(t.comm, [&] { return turnCame(t); });
  }
}

void finishTurns(std::span<const Ticket> tickets) {
  for (const Ticket& t : tickets) {
    // Counted and notified under the mutex, and the communicator not touched after letting go of it: once
    // the last ticket is counted, waitIdle returns and its caller (weftCommDestroy, weftCommAbort) deletes
    // the communicator. Counting first and notifying after, outside the mutex, raced with that delete
    // (ThreadSanitizer: notify_all against the condition variable's destructor, in the abort test).
    std::lock_guard lock(t.comm->orderMutex);
    t.comm->executed.fetch_add(1);
    if (t.comm->orderWaiters.load() != 0) t.comm->orderChanged.notify_all();
  }
}

void waitIdle(weftComm* comm) {
  // Always looks under the mutex (sleepUntil): idle seen there means the finisher has let go of it.
  sleepUntil(comm, [&] { return comm->executed.load() == comm->issued.load(); });
}

}  // namespace weft
