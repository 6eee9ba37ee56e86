// Setting up connections: listen/accept on the receiver, connect on the sender (both non-blocking).
#ifndef WEFT_PLUGINS_TCP_SETUP_H
#define WEFT_PLUGINS_TCP_SETUP_H

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tcp_conn.h"
#include "tcp_context.h"
#include "tcp_wire.h"

namespace weft::tcp {

using Clock = std::chrono::steady_clock;

// An accepted socket whose hello has not fully arrived; or this side's own connection whose peer may send
// its connection back on the same socket (returning: no deadline, the peer may never do so).
struct PendingAccept {
  PendingAccept(Context* ctx, int fd, const sockaddr_storage& peerAddr, Clock::time_point helloDeadline)
      : socket(ctx, fd, POLLIN), peer(peerAddr), deadline(helloDeadline) {}
  PolledSocket socket;
  sockaddr_storage peer;
  Clock::time_point deadline;
  unsigned char hello[kHelloBytes + kPairOfferBytes] = {};
  size_t got = 0;
};

// A hello checked and complete: the receive connection accept() hands out next.
struct ArrivedConnection {
  int fd;
  sockaddr_storage peer;
  uint64_t connectorId;
};

// An accepted socket whose connector offered it for the way back (kHelloOffersPair): this side's connect
// of the same pairKey to that listener takes it (a second descriptor of the socket) instead of a new one.
struct OfferedSocket {
  int fd;
  PairOffer offer;
};

struct ListenComm {
  ListenComm(Context* c, int fd, uint64_t token, const sockaddr_storage& addr);
  ~ListenComm();
  ListenComm(const ListenComm&) = delete;
  ListenComm& operator=(const ListenComm&) = delete;
  Context* ctx;
  uint64_t jobToken;
  std::string address;
  unsigned char handle[WEFT_NET_HANDLE_BYTES] = {};
  PolledSocket socket;  // last of these: when the constructor throws, the caller still owns fd
  // accept() and connectPaired() both move hellos along; the mutex keeps their lists whole.
  std::mutex mutex;
  std::vector<std::unique_ptr<PendingAccept>> pending;
  std::vector<std::unique_ptr<PendingAccept>> returning;
  std::vector<ArrivedConnection> arrived;
  std::vector<OfferedSocket> offered;
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
  unsigned char hello[kHelloBytes + kPairOfferBytes] = {};
  size_t helloBytes = kHelloBytes;
  size_t sent = 0;
  int attempts = 0;
  Clock::time_point retryAt{};
  // connectPaired: this side's listener (cleared if it closes first), the pair's key, and until when this
  // side waits for the peer's offer before opening a socket of its own (the side whose handle sorts lower
  // opens at once: both opening at the same time would leave two sockets).
  ListenComm* listener = nullptr;
  uint64_t pairKey = 0;
  Clock::time_point offerAwaitedUntil{};
  bool joined = false;  // sending its hello on the socket the peer offered
};

weftResult_t listenOn(Context* ctx, uint64_t jobToken, unsigned char* handle, ListenComm** listenComm);
weftResult_t acceptOne(ListenComm* l, Connection** recvComm, uint64_t* connectorId);
weftResult_t connectTo(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                       Connection** sendComm);
// connectTo that shares one socket with the peer's connection of the same pairKey towards `listener`
// (weftTransportPairOps_v1): one socket both ways saves the packets that only acknowledge.
weftResult_t connectPairedTo(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                             ListenComm* listener, uint64_t pairKey, Connection** sendComm);
// Accepts new sockets and reads the hellos that arrived, on the listener's own sockets and on those this
// side offered for the way back: complete ones go to `arrived` (and `offered`). Takes l->mutex.
weftResult_t progressHellos(ListenComm* l);

}  // namespace weft::tcp

#endif  // WEFT_PLUGINS_TCP_SETUP_H
