#include "core/comm/ordering.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "core/comm/comm.h"

namespace weft {
namespace {

bool turnCame(const Ticket& t) { return t.comm->executed.load(std::memory_order_acquire) == t.number; }

// A finisher looks at the waiter count before it counts its operation: once counted, the communicator may be
// deleted at any moment (weftCommAbort on another thread waits only for the count), so the count is its last
// touch. A waiter that counts itself between a finisher's look and its count misses that notify; it wakes
// on its own within this long and looks again.
constexpr auto kRecheck = std::chrono::milliseconds(2);

// Sleeps until ready(), looking under the mutex.
template <typename Ready>
void sleepUntil(weftComm* comm, Ready ready) {
  std::unique_lock lock(comm->orderMutex);
  comm->orderWaiters.fetch_add(1);
  while (!ready()) comm->orderChanged.wait_for(lock, kRecheck);
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
    weftComm* comm = t.comm;
    if (comm->orderWaiters.load() == 0) {  // the common case: nobody sleeps, no lock
      comm->executed.fetch_add(1);         // the last touch (kRecheck)
      continue;
    }
    // Counted and notified under the mutex: a waiter that finds the communicator idle (and may delete it)
    // looks under the mutex too, so it cannot do so before this thread lets go of it.
    std::lock_guard lock(comm->orderMutex);
    comm->executed.fetch_add(1);
    comm->orderChanged.notify_all();
  }
}

void waitIdle(weftComm* comm) {
  // Always looks under the mutex (sleepUntil): idle seen there means the finisher has let go of it.
  sleepUntil(comm, [&] { return comm->executed.load() == comm->issued.load(); });
}

}  // namespace weft
