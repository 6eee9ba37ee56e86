// Setting up connections: listen/accept on the receiver, connect on the sender (both non-blocking).
#ifndef WEFT_PLUGINS_TCP_SETUP_H
#define WEFT_PLUGINS_TCP_SETUP_H

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tcp_conn.h"
#include "tcp_context.h"
#include "tcp_wire.h"

namespace weft::tcp {

using Clock = std::chrono::steady_clock;

// An accepted socket whose hello has not fully arrived.
struct PendingAccept {
  PendingAccept(Context* ctx, int fd, const sockaddr_storage& peerAddr, Clock::time_point helloDeadline)
      : socket(ctx, fd, POLLIN), peer(peerAddr), deadline(helloDeadline) {}
  PolledSocket socket;
  sockaddr_storage peer;
  Clock::time_point deadline;
  unsigned char hello[kHelloBytes] = {};
  size_t got = 0;
};

struct ListenComm {
  ListenComm(Context* c, int fd, uint64_t token, const sockaddr_storage& addr);
  Context* ctx;
  uint64_t jobToken;
  std::string address;
  PolledSocket socket;  // last: when the constructor throws, the caller still owns fd
  std::vector<std::unique_ptr<PendingAccept>> pending;
};

// A connect() in progress, kept in the context between calls (the handle is const).
struct PendingConnect {
  enum class Stage { Waiting, Connecting, SendingHello };
  unsigned char handle[WEFT_NET_HANDLE_BYTES] = {};
  uint64_t jobToken = 0;
  uint64_t connectorId = 0;
  sockaddr_storage addr{};
  socklen_t addrLen = 0;
  Stage stage = Stage::Waiting;
  std::unique_ptr<PolledSocket> socket;  // none while waiting to retry
  unsigned char hello[kHelloBytes] = {};
  size_t sent = 0;
  int attempts = 0;
  Clock::time_point retryAt{};
};

weftResult_t listenOn(Context* ctx, uint64_t jobToken, unsigned char* handle, ListenComm** listenComm);
weftResult_t acceptOne(ListenComm* l, Connection** recvComm, uint64_t* connectorId);
weftResult_t connectTo(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                       Connection** sendComm);

}  // namespace weft::tcp

#endif  // WEFT_PLUGINS_TCP_SETUP_H
