// Socket creation, options and errno classification.
#ifndef WEFT_PLUGINS_TCP_SOCKET_H
#define WEFT_PLUGINS_TCP_SOCKET_H

#include <cstddef>
#include <string>

#include "weft/weft.h"

namespace weft::tcp {

inline constexpr long long kDefaultSocketBuffer = 4 << 20;

// A non-blocking, close-on-exec TCP socket with TCP_NODELAY and, when bufferBytes > 0, SO_SNDBUF and
// SO_RCVBUF. Returns -1 and sets *error on failure.
int createSocket(int family, long long bufferBytes, std::string* error);

// TCP_NODELAY on an accepted socket (buffer sizes are inherited from the listener).
void setNoDelay(int fd);

inline constexpr int kDefaultDeadPeerSeconds = 8;

// The kernel's heartbeat on a connected socket: keepalive probes once the connection has been idle for
// half of deadSeconds, so that a peer host that stops answering (power loss, a cut link) fails an idle
// connection after about deadSeconds. A peer that is alive but busy is not affected: its kernel answers.
// A connection with data outstanding is watched by Connection::checkPeerAnswers instead (keepalive does
// not probe then). deadSeconds <= 0 leaves the defaults (hours).
void watchLiveness(int fd, int deadSeconds);

// weftRemoteError for errors caused by the peer or the network (reset, refused, unreachable), else
// weftSystemError.
weftResult_t resultOfErrno(int err);

// Closes fd unless it is -1, keeping errno.
void closeFd(int fd);

}  // namespace weft::tcp

#endif  // WEFT_PLUGINS_TCP_SOCKET_H
