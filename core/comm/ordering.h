// Issue order is execution order, per communicator.
//
// Every operation takes a ticket from each communicator it uses when it is issued (under one global
// lock, so tickets of all communicators follow a single order), and runs only when each of those
// communicators has finished all earlier tickets. Ranks issue the same operations in the same order, so
// they run them in the same order too, whatever mix of threads and streams issues them; and because all
// tickets follow one global order, waiting for several turns can never form a cycle.
//
// An operation on one communicator (the common case) takes its ticket without the global lock: a cycle
// needs two operations that each hold a ticket the other waits behind, on two communicators, and
// operations on several communicators still take theirs in one global order. Counters are atomic and the
// thread whose turn has come, and the one finishing when nobody sleeps, touch no lock: back-to-back small
// collectives pay no mutex.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

struct weftComm;

namespace weft {

struct Ticket {
  weftComm* comm;
  uint64_t number;
};

// One ticket per distinct communicator, in the order given.
std::vector<Ticket> issueTickets(const std::vector<weftComm*>& comms);
// The ticket of an operation on one communicator (no lock, no allocation).
Ticket issueTicket(weftComm* comm);
// Blocks until each ticket's turn has come.
void waitTurns(std::span<const Ticket> tickets);
// Lets the next tickets run.
void finishTurns(std::span<const Ticket> tickets);
// Blocks until every issued ticket of comm has finished.
void waitIdle(weftComm* comm);

}  // namespace weft
