#include "core/comm/ordering.h"

#include <algorithm>
#include <mutex>

#include "core/comm/comm.h"

namespace weft {

std::vector<Ticket> issueTickets(const std::vector<weftComm*>& comms) {
  static std::mutex issueMutex;
  std::lock_guard global(issueMutex);
  std::vector<Ticket> tickets;
  for (weftComm* comm : comms) {
    bool seen = std::any_of(tickets.begin(), tickets.end(), [&](const Ticket& t) { return t.comm == comm; });
    if (seen) continue;
    std::lock_guard lock(comm->orderMutex);
    tickets.push_back({comm, comm->issued++});
  }
  return tickets;
}

void waitTurns(const std::vector<Ticket>& tickets) {
  for (const Ticket& t : tickets) {
    std::unique_lock lock(t.comm->orderMutex);
    t.comm->orderChanged.wait(lock, [&] { return t.comm->executed == t.number; });
  }
}

void finishTurns(const std::vector<Ticket>& tickets) {
  for (const Ticket& t : tickets) {
    {
      std::lock_guard lock(t.comm->orderMutex);
      ++t.comm->executed;
    }
    t.comm->orderChanged.notify_all();
  }
}

void waitIdle(weftComm* comm) {
  std::unique_lock lock(comm->orderMutex);
  comm->orderChanged.wait(lock, [&] { return comm->executed == comm->issued; });
}

}  // namespace weft
