// The short path of a group of Send/Recv (weftGroupStart; weftSend/weftRecv ...; weftGroupEnd), as pipeline
// parallelism issues them by the thousand: each message goes straight to its connection's transport, and the
// group waits for them together.
//
// A CommChannel (the general path, run_batch.cpp) does the same through per-peer queues that hold messages
// until their connection exists, carries messages to self and vectored ones, and keeps transfers for an
// algorithm's later steps; for an 8-byte exchange between two ranks over shm that bookkeeping was a quarter
// of the instructions and 30 % of the time. This path takes only groups that need none of it and leaves the
// others, untouched, to the general path. Messages, tags, errors and waiting are the same on both paths, so
// a group may take either on either side.
#pragma once

#include <span>

#include "core/collectives/op.h"

namespace weft {

// Runs `ops` (a batch's Send/Recv, under its communicator's turn) when they are all on one communicator, go
// to other ranks over connections already made, and are at most kMaxDirectMessages. False, having done
// nothing, otherwise. Throws like the general path when a message fails.
bool runPointToPointDirect(std::span<const Op> ops);
constexpr size_t kMaxDirectMessages = 16;

}  // namespace weft
