// A lane: what one thread running a communicator's collectives keeps between them, so that several threads
// can run collectives of one communicator at once (a plan's streams, fusion/plan_executor.h).
//
// Eager calls take turns on a communicator and all use its main lane (kCollectiveChannel). A plan launch holds
// the communicator's turn and runs its streams on lanes of their own: each lane has its own transport channel
// (so its messages never meet another lane's), numbers its collectives itself (every rank runs the same
// operations on the same lane in the same order, so the tags agree), and has its own transfer bookkeeping,
// scratch and fusion buffers. A thread runs on a lane while a LaneScope binds it; otherwise on the
// communicator's main lane.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/comm/channel_storage.h"
#include "core/plugins/host_memory.h"

struct weftComm;

namespace weft {

struct LaneState {
  explicit LaneState(int channelId) : channel(channelId) {}

  int channel;                                          // transport channel id (core/comm/connections.h)
  uint32_t collectiveCount = 0;                         // tag of the lane's next collective
  ChannelStorage storage;                               // CommChannel's transfers, reused
  std::deque<std::vector<unsigned char>> selfMessages;  // messages to self (AllToAll's own block)
  std::vector<unsigned char> scratch[2];                // Channel::scratch
  HostBuffer fusionBuffers[2];                          // packed inputs and outputs of fused collectives
  HostBuffer bounce;                                    // pieces of AllReduces on a backend (bounce.h)
  std::vector<FusedCall> fusedCalls;                    // a fused collective's calls, when run on their buffers

  // Memory the lane holds now.
  size_t bytesHeld() const;
};

// The lane the calling thread runs `comm`'s collectives on: the bound one, else the communicator's main lane.
LaneState& laneOf(weftComm& comm);

// Binds the calling thread to `lane` for `comm` while it lives.
class LaneScope {
 public:
  LaneScope(const weftComm& comm, LaneState& lane);
  ~LaneScope();
  LaneScope(const LaneScope&) = delete;
  LaneScope& operator=(const LaneScope&) = delete;

 private:
  const weftComm* previousComm_;
  LaneState* previousLane_;
};

}  // namespace weft
