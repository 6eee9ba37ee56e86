// Setting up connections: listen/accept on the receiver, connect on the sender (both non-blocking).
//
// The connector (the sender) creates the connection's segment and sends it, with its doorbell, in its
// hello; connect() is done once the hello is sent, so a sender never waits for the receiver to accept (as
// with TCP, small messages are buffered meanwhile). The acceptor checks the hello, maps both, decides
// whether large messages go by CMA and replies with that and its own doorbell.
#ifndef WEFT_PLUGINS_SHM_SETUP_H
#define WEFT_PLUGINS_SHM_SETUP_H

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shm_conn.h"
#include "shm_context.h"
#include "shm_segment.h"
#include "shm_wire.h"

namespace weft::shm {

using Clock = std::chrono::steady_clock;

// An accepted socket whose hello has not arrived.
struct PendingAccept {
  PendingAccept(Context* ctx, int fd, Clock::time_point helloDeadline)
      : socket(ctx, fd, POLLIN), deadline(helloDeadline) {}
  PolledSocket socket;
  Clock::time_point deadline;
};

struct ListenComm {
  ListenComm(Context* c, int fd, uint64_t token, std::string socketName);
  Context* ctx;
  uint64_t jobToken;
  std::string name;
  PolledSocket socket;  // last of these: when the constructor throws, the caller still owns fd
  std::vector<std::unique_ptr<PendingAccept>> pending;
};

// A connect() in progress, kept in the context between calls (the handle is const).
struct PendingConnect {
  PendingConnect() = default;
  ~PendingConnect();
  PendingConnect(const PendingConnect&) = delete;
  PendingConnect& operator=(const PendingConnect&) = delete;

  unsigned char handle[WEFT_NET_HANDLE_BYTES] = {};
  uint64_t jobToken = 0;
  uint64_t connectorId = 0;
  Handle peer;
  int segmentFd = -1;
  Mapping segment;
  std::unique_ptr<PolledSocket> socket;  // none until the Unix socket connected
  unsigned char hello[kHelloBytes] = {};
};

weftResult_t listenOn(Context* ctx, uint64_t jobToken, unsigned char* handle, ListenComm** listenComm);
weftResult_t acceptOne(ListenComm* l, Connection** recvComm, uint64_t* connectorId);
weftResult_t connectTo(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                       Connection** sendComm);

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_SETUP_H
