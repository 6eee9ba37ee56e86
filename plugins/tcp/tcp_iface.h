// Choice of the network interface and address to listen on (WEFT_SOCKET_IFNAME, WEFT_SOCKET_FAMILY).
#ifndef WEFT_PLUGINS_TCP_IFACE_H
#define WEFT_PLUGINS_TCP_IFACE_H

#include <sys/socket.h>

#include <string>

namespace weft::tcp {

struct Interface {
  std::string name;
  sockaddr_storage addr{};  // port 0
  socklen_t addrLen = 0;
  bool loopback = false;
};

// Picks an interface that is up. ifnameSpec (may be NULL or empty) is a comma list of name prefixes, like
// NCCL_SOCKET_IFNAME: a leading '^' excludes the listed names, a following '=' makes the names exact. Without
// it: the first interface that is not loopback or docker*, else loopback. family is AF_UNSPEC (IPv4 first),
// AF_INET or AF_INET6. On failure returns false and says why in *error.
bool selectInterface(const char* ifnameSpec, int family, Interface* out, std::string* error);

// True when name is selected by the spec (exposed for the tests of the matching rules).
bool interfaceMatches(const char* ifnameSpec, const std::string& name);

// "1.2.3.4:5" or "[fe80::1%2]:5"; without the port: "1.2.3.4" or "fe80::1%2".
std::string formatAddress(const sockaddr_storage& addr, bool withPort = true);

// Link speed from /sys/class/net/<name>/speed in GB/s; 0 when unknown.
double linkSpeedGBps(const std::string& name);

}  // namespace weft::tcp

#endif  // WEFT_PLUGINS_TCP_IFACE_H
