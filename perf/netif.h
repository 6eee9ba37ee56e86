// The interface a TCP peer (Gloo) listens on, chosen by WEFT_SOCKET_IFNAME's rules so that both libraries
// can be pointed at the same interface. perf/ may not include the tcp plugin's code, hence this copy.
#pragma once

#include <string>

namespace commperf {

// A comma list of name prefixes; a leading '^' excludes the listed names, a following '=' makes them exact.
bool interfaceMatches(const std::string& spec, const std::string& name);

struct NetInterface {
  std::string name;
  std::string address;  // numeric, IPv4 preferred
};

// Empty spec: the loopback interface. Otherwise the first interface that is up, matches and has an address.
// False with `error` set when none does.
bool pickInterface(const std::string& spec, NetInterface& out, std::string& error);

}  // namespace commperf
