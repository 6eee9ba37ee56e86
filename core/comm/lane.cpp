#include "core/comm/lane.h"

#include "core/comm/comm.h"
#include "core/common/capacity_bytes.h"
#include "core/common/fast_tls.h"

namespace weft {
namespace {

// The calling thread's binding (LaneScope): a plan stream's thread runs its communicator's collectives on its
// lane. Plain pointers: binding and looking up allocate nothing.
thread_local const weftComm* boundComm WEFT_FAST_TLS = nullptr;
thread_local LaneState* boundLane WEFT_FAST_TLS = nullptr;

}  // namespace

size_t LaneState::bytesHeld() const {
  size_t bytes = sizeof(*this) + storage.transfers.size() * sizeof(ChannelTransfer) +
                 capacityBytes(storage.active) + capacityBytes(storage.unstarted) +
                 capacityBytes(storage.blockedPass) + capacityBytes(storage.kept);
  for (const ChannelTransfer& t : storage.transfers) bytes += capacityBytes(t.pieces) + capacityBytes(t.bounce);
  return bytes + summedCapacityBytes(scratch) + fusionBuffers[0].capacity() + fusionBuffers[1].capacity() +
         bounce.capacity() + summedCapacityBytes(selfMessages) + capacityBytes(fusedCalls);
}

LaneState& laneOf(weftComm& comm) { return boundComm == &comm ? *boundLane : comm.mainLane; }

LaneScope::LaneScope(const weftComm& comm, LaneState& lane) : previousComm_(boundComm), previousLane_(boundLane) {
  boundComm = &comm;
  boundLane = &lane;
}

LaneScope::~LaneScope() {
  boundComm = previousComm_;
  boundLane = previousLane_;
}

}  // namespace weft
