// WEFT_SOCKET_CONGESTION (plugins/tcp/tcp_congestion.h) on real loopback sockets: what the setting parses to,
// which addresses count as this host's, and what a socket ends up with (read back with getsockopt) before it
// connects, for a listener's connection from "another host" (127.0.0.2: another address, the same kernel), and
// for a name the kernel does not know.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "tcp_congestion.h"

namespace {

using weft::tcp::CongestionSetting;

std::string congestionOf(int fd) {
  char name[16] = {};
  socklen_t len = sizeof(name);
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return {};
  return {name, strnlen(name, sizeof(name))};
}

bool setCongestion(int fd, const char* name) {
  return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, static_cast<socklen_t>(std::strlen(name))) == 0;
}

sockaddr_storage ipv4(const char* text, uint16_t port = 0) {
  sockaddr_storage s{};
  auto& in = reinterpret_cast<sockaddr_in&>(s);
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  inet_pton(AF_INET, text, &in.sin_addr);
  return s;
}

int tcpSocket() { return socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP); }

CongestionSetting parsed(const char* text) {
  CongestionSetting s;
  EXPECT_TRUE(weft::tcp::parseCongestion(text, &s)) << text;
  return s;
}

TEST(TcpCongestion, ParsesTheSetting) {
  EXPECT_EQ(parsed(nullptr).mode, CongestionSetting::Mode::WithinHost);
  EXPECT_EQ(parsed("").mode, CongestionSetting::Mode::WithinHost);
  EXPECT_EQ(parsed("auto").mode, CongestionSetting::Mode::WithinHost);
  EXPECT_EQ(parsed("host").mode, CongestionSetting::Mode::Host);
  CongestionSetting reno = parsed("reno");
  EXPECT_EQ(reno.mode, CongestionSetting::Mode::Named);
  EXPECT_EQ(reno.name, "reno");
  CongestionSetting s;
  EXPECT_FALSE(weft::tcp::parseCongestion("cubic reno", &s));
  EXPECT_FALSE(weft::tcp::parseCongestion("a-name-longer-than-15", &s));
  EXPECT_FALSE(weft::tcp::parseCongestion("bbr;", &s));
}

TEST(TcpCongestion, ThisHostIsLoopbackOrTheInterfaceAddress) {
  const sockaddr_storage own = ipv4("192.0.2.7");
  EXPECT_TRUE(weft::tcp::isThisHost(ipv4("127.0.0.1"), own));
  EXPECT_TRUE(weft::tcp::isThisHost(ipv4("127.3.2.1"), own));
  EXPECT_TRUE(weft::tcp::isThisHost(ipv4("192.0.2.7", 4000), own));
  EXPECT_FALSE(weft::tcp::isThisHost(ipv4("192.0.2.8"), own));
  sockaddr_storage v6{};
  auto& in6 = reinterpret_cast<sockaddr_in6&>(v6);
  in6.sin6_family = AF_INET6;
  in6.sin6_addr = in6addr_loopback;
  EXPECT_TRUE(weft::tcp::isThisHost(v6, own));
}

// Before a socket connects: by default bbr gives way to cubic (or reno) within the host only; "host" leaves
// it; a name is set everywhere, and one the kernel refuses is reported, the socket left as it was.
TEST(TcpCongestion, ChosenBeforeConnecting) {
  const int fd = tcpSocket();
  ASSERT_GE(fd, 0);
  const std::string start = congestionOf(fd);
  ASSERT_FALSE(start.empty());

  auto applied = weft::tcp::chooseCongestion(fd, parsed("auto"), "bbr", false);  // between hosts
  EXPECT_TRUE(applied.change.empty()) << applied.change;
  EXPECT_EQ(congestionOf(fd), start);
  applied = weft::tcp::chooseCongestion(fd, parsed("host"), "bbr", true);
  EXPECT_TRUE(applied.change.empty()) << applied.change;
  EXPECT_EQ(congestionOf(fd), start);
  applied = weft::tcp::chooseCongestion(fd, parsed("auto"), "cubic", true);  // only bbr gives way
  EXPECT_TRUE(applied.change.empty()) << applied.change;
  EXPECT_EQ(congestionOf(fd), start);

  applied = weft::tcp::chooseCongestion(fd, parsed("auto"), "bbr", true);
  const std::string now = congestionOf(fd);
  EXPECT_TRUE(now == "cubic" || now == "reno") << now;
  EXPECT_EQ(applied.change, "bbr -> " + now + " (within this host)");
  EXPECT_FALSE(applied.refused);

  applied = weft::tcp::chooseCongestion(fd, parsed("reno"), now, false);  // reno is always built in
  EXPECT_EQ(congestionOf(fd), "reno");
  EXPECT_FALSE(applied.refused);
  EXPECT_EQ(applied.change.empty(), now == "reno") << applied.change;

  applied = weft::tcp::chooseCongestion(fd, parsed("nosuch_cc"), "reno", true);
  EXPECT_TRUE(applied.refused);
  EXPECT_NE(applied.change.find("WEFT_SOCKET_CONGESTION=nosuch_cc refused"), std::string::npos) << applied.change;
  EXPECT_EQ(congestionOf(fd), "reno");
  close(fd);
}

// A listener chose for connections within the host; a connection accepted from another address gets the
// host's choice back, one from the listener's own address keeps the listener's.
TEST(TcpCongestion, AcceptedFromAnotherHostGetsTheHostsChoiceBack) {
  const std::string hostChoice = weft::tcp::hostCongestion();
  ASSERT_FALSE(hostChoice.empty());
  const char* listenerChoice = hostChoice == "reno" ? "cubic" : "reno";
  const int listener = tcpSocket();
  ASSERT_GE(listener, 0);
  if (!setCongestion(listener, listenerChoice)) {
    close(listener);
    GTEST_SKIP() << "this kernel refuses congestion control " << listenerChoice;
  }
  sockaddr_storage at = ipv4("127.0.0.1");
  socklen_t len = sizeof(sockaddr_in);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&at), len), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&at), &len), 0);

  for (const char* from : {"127.0.0.2", "127.0.0.1"}) {
    SCOPED_TRACE(from);
    const int client = tcpSocket();
    ASSERT_GE(client, 0);
    sockaddr_storage source = ipv4(from);
    ASSERT_EQ(bind(client, reinterpret_cast<sockaddr*>(&source), sizeof(sockaddr_in)), 0) << std::strerror(errno);
    ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&at), sizeof(sockaddr_in)), 0) << std::strerror(errno);
    const int accepted = accept(listener, nullptr, nullptr);
    ASSERT_GE(accepted, 0);
    EXPECT_EQ(congestionOf(accepted), listenerChoice);  // inherited from the listener
    const auto applied = weft::tcp::restoreBetweenHosts(accepted, parsed("auto"), hostChoice);
    const bool anotherHost = std::strcmp(from, "127.0.0.1") != 0;
    EXPECT_EQ(congestionOf(accepted), anotherHost ? hostChoice : std::string(listenerChoice));
    EXPECT_EQ(applied.change.empty(), !anotherHost) << applied.change;
    // Only the default setting hands connections back.
    EXPECT_TRUE(weft::tcp::restoreBetweenHosts(accepted, parsed("host"), listenerChoice).change.empty());
    close(accepted);
    close(client);
  }
  close(listener);
}

}  // namespace
