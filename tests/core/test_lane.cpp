// A lane's reported memory (LaneState::bytesHeld, summed into a plan's resourceBytes) counts every buffer it
// keeps between collectives, the transfers' own vectors included.
#include <gtest/gtest.h>

#include "core/comm/lane.h"

namespace weft {
namespace {

TEST(LaneState, BytesHeldCountsWhatTransfersAndFusedCallsKeep) {
  LaneState lane(0);
  const size_t empty = lane.bytesHeld();
  EXPECT_GE(empty, sizeof(LaneState));

  lane.storage.transfers.emplace_back();
  ChannelTransfer& transfer = lane.storage.transfers.back();
  transfer.bounce.reserve(size_t{1} << 20);  // a bounce buffer kept from a vectored message
  transfer.pieces.reserve(100);
  lane.fusedCalls.reserve(1000);
  lane.scratch[1].reserve(4096);

  const size_t kept = sizeof(ChannelTransfer) + transfer.bounce.capacity() +
                      transfer.pieces.capacity() * sizeof(weftTransportIov_v1) +
                      lane.fusedCalls.capacity() * sizeof(FusedCall) + lane.scratch[1].capacity();
  EXPECT_EQ(lane.bytesHeld(), empty + kept);
}

}  // namespace
}  // namespace weft
