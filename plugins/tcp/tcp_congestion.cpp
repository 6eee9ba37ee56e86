#include "tcp_congestion.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace weft::tcp {

namespace {

// The kernel's names are at most 15 characters (TCP_CA_NAME_MAX, with the NUL).
constexpr size_t kNameBytes = 16;

std::string currentCongestion(int fd) {
  char name[kNameBytes] = {};
  socklen_t len = sizeof(name);
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return {};
  return {name, strnlen(name, sizeof(name))};
}

// 0, or the errno of the refusal.
int setCongestion(int fd, const std::string& name) {
  return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.c_str(), static_cast<socklen_t>(name.size())) == 0
             ? 0
             : errno;
}

bool sameIp(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in&>(b).sin_addr.s_addr;
  }
  return a.ss_family == AF_INET6 &&
         std::memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                     &reinterpret_cast<const sockaddr_in6&>(b).sin6_addr, sizeof(in6_addr)) == 0;
}

bool isLoopback(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr) >> 24) == 127;
  }
  return a.ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr);
}

// Whether both ends of a connected socket have the same address: then its segments never leave this host.
bool bothEndsHere(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t localLen = sizeof(local), peerLen = sizeof(peer);
  return getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLen) == 0 &&
         getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peerLen) == 0 && sameIp(local, peer);
}

}  // namespace

bool parseCongestion(const char* text, CongestionSetting* setting) {
  *setting = CongestionSetting{};
  if (text == nullptr || *text == '\0' || std::strcmp(text, "auto") == 0) return true;
  if (std::strcmp(text, "host") == 0) {
    setting->mode = CongestionSetting::Mode::Host;
    return true;
  }
  const size_t length = std::strlen(text);
  if (length >= kNameBytes) return false;
  for (size_t i = 0; i < length; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (std::isalnum(c) == 0 && c != '_' && c != '-') return false;
  }
  setting->mode = CongestionSetting::Mode::Named;
  setting->name = text;
  return true;
}

std::string hostCongestion() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) return {};
  std::string name = currentCongestion(fd);
  close(fd);
  return name;
}

bool isThisHost(const sockaddr_storage& address, const sockaddr_storage& own) {
  return isLoopback(address) || sameIp(address, own);
}

CongestionApplied chooseCongestion(int fd, const CongestionSetting& setting, const std::string& hostChoice,
                                   bool withinHost) {
  if (setting.mode == CongestionSetting::Mode::Named) {
    if (hostChoice == setting.name) return {};
    if (int err = setCongestion(fd, setting.name); err != 0) {
      return {
          "WEFT_SOCKET_CONGESTION=" + setting.name + " refused (" + std::strerror(err) + "), kept " + hostChoice,
          true};
    }
    return {hostChoice + " -> " + setting.name + " (WEFT_SOCKET_CONGESTION)"};
  }
  if (setting.mode == CongestionSetting::Mode::Host || !withinHost || hostChoice != "bbr") return {};
  // The first of these the kernel lets this process set; neither: bbr it stays, as the host chose.
  static constexpr std::array<const char*, 2> kInstead = {"cubic", "reno"};
  const auto taken = std::find_if(kInstead.begin(), kInstead.end(),
                                  [fd](const char* name) { return setCongestion(fd, name) == 0; });
  if (taken == kInstead.end()) return {};
  return {hostChoice + " -> " + *taken + " (within this host)"};
}

CongestionApplied restoreBetweenHosts(int fd, const CongestionSetting& setting, const std::string& hostChoice) {
  if (setting.mode != CongestionSetting::Mode::WithinHost || hostChoice.empty() || bothEndsHere(fd)) return {};
  const std::string chosen = currentCongestion(fd);
  if (chosen == hostChoice || setCongestion(fd, hostChoice) != 0) return {};
  return {chosen + " -> " + hostChoice + " (the peer is on another host)"};
}

}  // namespace weft::tcp
