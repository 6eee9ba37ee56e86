// The congestion control of Weft's sockets (WEFT_SOCKET_CONGESTION).
//
// Between two ends on one host the loopback has no congestion to control, yet the host's choice still runs on
// every segment. With bbr (the default on some hosts; Debian's is cubic) a connection paces itself to its
// estimate of the path's rate, sending from timers, and on the 2-vCPU Xeon guest of 2026-12-02 large calls
// took twice as long after some hundreds of them, in most launches whose ranks were not bound to CPUs, and
// stayed so (perf/README.md, "Congestion control on the loopback"). cubic and reno do not pace: they send as
// much as their window allows. So by default a socket whose connections have both ends on this
// host does not get bbr: it gets cubic, or reno where cubic is not allowed (net.ipv4.
// tcp_allowed_congestion_control, unless the process may change network settings); connections between
// hosts keep what the host chose.
//
// The choice is made before a socket connects or listens: bbr asks the kernel to pace the socket when it
// starts, and a socket switched away from bbr later stays paced (measured: 128 KiB AllReduces took 74-76 us
// instead of 41-44). A listener does not know who will connect, so it chooses for connections within the
// host, and a connection accepted from another host gets the host's choice back (which then starts as it
// would have).
#ifndef WEFT_PLUGINS_TCP_CONGESTION_H
#define WEFT_PLUGINS_TCP_CONGESTION_H

#include <sys/socket.h>

#include <string>

namespace weft::tcp {

struct CongestionSetting {
  enum class Mode {
    WithinHost,  // "auto" (default): within one host bbr becomes cubic (else reno); the rest as the host chose
    Host,        // "host": every socket as the host chose
    Named,       // a name (cubic, reno, bbr, ...): every socket, within the host or not
  };
  Mode mode = Mode::WithinHost;
  std::string name;  // Named only
};

// Parses WEFT_SOCKET_CONGESTION; NULL or empty gives the default. False for text that cannot name a
// congestion control (too long for the kernel's names, or not letters, digits, '_' and '-').
bool parseCongestion(const char* text, CongestionSetting* setting);

// What a new TCP socket gets here (net.ipv4.tcp_congestion_control); empty when that cannot be read.
std::string hostCongestion();

// Whether `address` is this host's: a loopback address, or the same IP as `own` (the interface's).
bool isThisHost(const sockaddr_storage& address, const sockaddr_storage& own);

// What a call below did, for the log ("bbr -> cubic"), or why the named one was refused (`refused`); empty
// when it left the socket as it was.
struct CongestionApplied {
  std::string change;
  bool refused = false;
};

// Before a socket connects or listens. withinHost: the connections it will carry have both ends on this host
// (a listener passes true; see restoreBetweenHosts). hostChoice: hostCongestion().
CongestionApplied chooseCongestion(int fd, const CongestionSetting& setting, const std::string& hostChoice,
                                   bool withinHost);

// An accepted connection, whose listener chose for connections within the host: when its peer is on another
// host, it gets the host's choice back.
CongestionApplied restoreBetweenHosts(int fd, const CongestionSetting& setting, const std::string& hostChoice);

}  // namespace weft::tcp

#endif  // WEFT_PLUGINS_TCP_CONGESTION_H
