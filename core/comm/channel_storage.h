// What a communicator's CommChannels of one channel id keep from one operation to the next (see
// core/comm/comm_channel.h): the transfers and the per-queue counters, cleared but not freed, so that an
// operation in steady state allocates nothing. One CommChannel uses it at a time (operations on a
// communicator take turns); a CommChannel made while another of its id lives gets storage of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "core/algorithms/channel.h"
#include "weft/plugin.h"

namespace weft {

struct ChannelTransfer {
  int peer;
  bool isRecv;
  void* data;
  size_t bytes;
  uint32_t tag;
  void* connection = nullptr;
  void* request = nullptr;  // the transport's, once started
  bool started = false;
  bool done = false;
  // A vectored message (CommChannel::isendv/irecvv): its buffers, handed to the transport's vectored calls
  // (`vectored`); over a transport without them, the message goes through `bounce` (data) instead, packed at
  // posting or scattered into the buffers once received.
  bool vectored = false;
  std::vector<weftTransportIov_v1> pieces;
  std::vector<unsigned char> bounce;
};

struct ChannelStorage {
  std::deque<ChannelTransfer> transfers;  // deque: pointers in Requests and `active` stay valid as it grows
  size_t used = 0;                        // the current operation's transfers are the first `used`
  std::vector<ChannelTransfer*> active;   // not yet done, oldest first
  // Per queue (2 per peer), sized once: a Send/Recv on a large communicator must not clear 2 x nranks
  // counters per operation or per pass.
  std::vector<int> unstarted;         // transfers posted but not started (all 0 when unstartedTotal is 0)
  size_t unstartedTotal = 0;          // their sum: an operation that ended early leaves it above 0
  std::vector<uint32_t> blockedPass;  // == pass: blocked during the current progress pass
  uint32_t pass = 0;                  // numbers progress passes (0 is never current)
  std::vector<Request> kept;          // CommChannel::keep: a batch's Send/Recv, waited for at its end
  bool inUse = false;
};

}  // namespace weft
