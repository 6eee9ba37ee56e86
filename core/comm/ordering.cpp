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
    t.comm->executed.fetch_add(1);
    if (t.comm->orderWaiters.load() == 0) continue;
    { std::lock_guard lock(t.comm->orderMutex); }  // a waiter between its look and its sleep has slept now
    t.comm->orderChanged.notify_all();
  }
}

void waitIdle(weftComm* comm) {
  auto idle = [&] { return comm->executed.load() == comm->issued.load(); };
  if (!idle()) sleepUntil(comm, idle);
}

}  // namespace weft
