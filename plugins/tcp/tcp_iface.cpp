#include "tcp_iface.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

namespace weft::tcp {

namespace {

struct Spec {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;
};

Spec parseSpec(const char* text) {
  Spec spec;
  std::string s(text);
  size_t pos = 0;
  if (pos < s.size() && s[pos] == '^') {
    spec.exclude = true;
    ++pos;
  }
  if (pos < s.size() && s[pos] == '=') {
    spec.exact = true;
    ++pos;
  }
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    if (comma > pos) spec.names.push_back(s.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return spec;
}

bool matches(const Spec& spec, const std::string& name) {
  bool found = false;
  for (const std::string& entry : spec.names) {
    if (spec.exact ? name == entry : name.compare(0, entry.size(), entry) == 0) {
      found = true;
      break;
    }
  }
  return spec.exclude ? !found : found;
}

struct Candidate {
  std::string name;
  bool loopback = false;
  std::vector<sockaddr_storage> addrs;
};

bool isLinkLocal(const sockaddr_storage& addr) {
  if (addr.ss_family != AF_INET6) return false;
  sockaddr_in6 a6;
  std::memcpy(&a6, &addr, sizeof(a6));
  return IN6_IS_ADDR_LINKLOCAL(&a6.sin6_addr);
}

// The preferred address of an interface for the family, or nullptr.
const sockaddr_storage* pickAddress(const Candidate& c, int family) {
  const sockaddr_storage* best = nullptr;
  int bestRank = 99;
  for (const sockaddr_storage& a : c.addrs) {
    if (family != AF_UNSPEC && a.ss_family != family) continue;
    int rank = a.ss_family == AF_INET ? 0 : (isLinkLocal(a) ? 2 : 1);
    if (rank < bestRank) {
      best = &a;
      bestRank = rank;
    }
  }
  return best;
}

}  // namespace

bool interfaceMatches(const char* ifnameSpec, const std::string& name) {
  return matches(parseSpec(ifnameSpec), name);
}

bool selectInterface(const char* ifnameSpec, int family, Interface* out, std::string* error) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    *error = std::string("getifaddrs failed: ") + std::strerror(errno);
    return false;
  }
  std::vector<Candidate> candidates;
  for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_name == nullptr || (ifa->ifa_flags & IFF_UP) == 0) continue;
    int f = ifa->ifa_addr->sa_family;
    if (f != AF_INET && f != AF_INET6) continue;
    Candidate* c = nullptr;
    for (Candidate& existing : candidates) {
      if (existing.name == ifa->ifa_name) c = &existing;
    }
    if (c == nullptr) {
      candidates.push_back(Candidate{ifa->ifa_name, (ifa->ifa_flags & IFF_LOOPBACK) != 0, {}});
      c = &candidates.back();
    }
    sockaddr_storage addr{};
    std::memcpy(&addr, ifa->ifa_addr, f == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    c->addrs.push_back(addr);
  }
  freeifaddrs(list);

  const bool haveSpec = ifnameSpec != nullptr && ifnameSpec[0] != '\0';
  const Spec spec = haveSpec ? parseSpec(ifnameSpec) : Spec{};
  auto tryPick = [&](bool wantLoopback) {
    for (const Candidate& c : candidates) {
      if (haveSpec) {
        if (!matches(spec, c.name)) continue;
      } else if (c.loopback != wantLoopback || c.name.compare(0, 6, "docker") == 0) {
        continue;
      }
      const sockaddr_storage* a = pickAddress(c, family);
      if (a == nullptr) continue;
      out->name = c.name;
      out->addr = *a;
      out->addrLen = a->ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
      out->loopback = c.loopback;
      return true;
    }
    return false;
  };
  if (tryPick(false) || (!haveSpec && tryPick(true))) return true;
  const char* familyName = family == AF_INET    ? " with an IPv4 address"
                           : family == AF_INET6 ? " with an IPv6 address"
                                                : "";
  *error = haveSpec ? std::string("no interface that is up matches WEFT_SOCKET_IFNAME=") + ifnameSpec + familyName
                    : std::string("no interface that is up") + familyName;
  return false;
}

std::string formatAddress(const sockaddr_storage& addr, bool withPort) {
  char host[INET6_ADDRSTRLEN] = "?";
  char text[INET6_ADDRSTRLEN + 32];
  if (addr.ss_family == AF_INET) {
    sockaddr_in a4;
    std::memcpy(&a4, &addr, sizeof(a4));
    inet_ntop(AF_INET, &a4.sin_addr, host, sizeof(host));
    if (!withPort) return host;
    std::snprintf(text, sizeof(text), "%s:%u", host, static_cast<unsigned>(ntohs(a4.sin_port)));
  } else if (addr.ss_family == AF_INET6) {
    sockaddr_in6 a6;
    std::memcpy(&a6, &addr, sizeof(a6));
    inet_ntop(AF_INET6, &a6.sin6_addr, host, sizeof(host));
    char name[INET6_ADDRSTRLEN + 16];
    if (a6.sin6_scope_id != 0) {
      std::snprintf(name, sizeof(name), "%s%%%u", host, static_cast<unsigned>(a6.sin6_scope_id));
    } else {
      std::snprintf(name, sizeof(name), "%s", host);
    }
    if (!withPort) return name;
    std::snprintf(text, sizeof(text), "[%s]:%u", name, static_cast<unsigned>(ntohs(a6.sin6_port)));
  } else {
    std::snprintf(text, sizeof(text), "(address family %d)", addr.ss_family);
  }
  return text;
}

double linkSpeedGBps(const std::string& name) {
  std::ifstream file("/sys/class/net/" + name + "/speed");
  long mbps = 0;
  if (!(file >> mbps) || mbps <= 0) return 0.0;
  return static_cast<double>(mbps) / 8000.0;
}

}  // namespace weft::tcp
