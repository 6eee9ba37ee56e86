#include "netif.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <vector>

namespace commperf {

bool interfaceMatches(const std::string& spec, const std::string& name) {
  size_t pos = 0;
  bool exclude = pos < spec.size() && spec[pos] == '^';
  if (exclude) ++pos;
  bool exact = pos < spec.size() && spec[pos] == '=';
  if (exact) ++pos;
  bool found = false;
  while (pos <= spec.size() && !found) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string entry = spec.substr(pos, comma - pos);
    if (!entry.empty()) found = exact ? name == entry : name.compare(0, entry.size(), entry) == 0;
    pos = comma + 1;
  }
  return exclude ? !found : found;
}

bool pickInterface(const std::string& spec, NetInterface& out, std::string& error) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    error = "getifaddrs failed";
    return false;
  }
  // Two passes: an IPv4 address anywhere beats an IPv6 one, as in the tcp plugin.
  bool picked = false;
  for (int family : {AF_INET, AF_INET6}) {
    for (ifaddrs* ifa = list; ifa && !picked; ifa = ifa->ifa_next) {
      if (!ifa->ifa_addr || !ifa->ifa_name || !(ifa->ifa_flags & IFF_UP) || ifa->ifa_addr->sa_family != family)
        continue;
      bool loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
      if (spec.empty() ? !loopback : !interfaceMatches(spec, ifa->ifa_name)) continue;
      char text[INET6_ADDRSTRLEN] = {};
      const void* addr =
          family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(ifa->ifa_addr)->sin_addr)
                            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(ifa->ifa_addr)->sin6_addr);
      if (!inet_ntop(family, addr, text, sizeof text)) continue;
      if (family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<sockaddr_in6*>(ifa->ifa_addr)->sin6_addr))
        continue;  // would need a scope id
      out = {ifa->ifa_name, text};
      picked = true;
    }
    if (picked) break;
  }
  freeifaddrs(list);
  if (!picked)
    error = spec.empty() ? "no loopback interface is up"
                         : "no interface that is up matches WEFT_SOCKET_IFNAME=" + spec;
  return picked;
}

}  // namespace commperf
