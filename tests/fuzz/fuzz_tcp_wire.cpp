// The tcp transport's wire (plugins/tcp/tcp_wire.h): the listen handle a peer sends through the bootstrap,
// the hello a connector sends (with its pair offer) and the header in front of every message. The first byte picks
// which; the rest is the fixed-size record, zero-padded, in a buffer of exactly that size (so that ASan sees any
// overread). Invariants: an accepted handle is an IPv4 or IPv6 address that re-encodes to a handle decoding the
// same; hellos, pair offers and headers re-encode to the bytes the decoder read.
#include <algorithm>
#include <cstring>
#include <vector>

#include "plugins/tcp/tcp_wire.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace tcp = weft::tcp;

void handle(const uint8_t* data, size_t size) {
  const std::vector<unsigned char> in = weft::fuzz::record(data, size, WEFT_NET_HANDLE_BYTES);
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (!tcp::decodeHandle(in.data(), &addr, &len)) return;
  FUZZ_CHECK((addr.ss_family == AF_INET && len == sizeof(sockaddr_in)) ||
             (addr.ss_family == AF_INET6 && len == sizeof(sockaddr_in6)));
  std::vector<unsigned char> out(WEFT_NET_HANDLE_BYTES);
  tcp::encodeHandle(addr, out.data());
  sockaddr_storage again{};
  socklen_t againLen = 0;
  FUZZ_CHECK(tcp::decodeHandle(out.data(), &again, &againLen));
  FUZZ_CHECK(againLen == len && std::memcmp(&again, &addr, len) == 0);
}

void hello(const uint8_t* data, size_t size) {
  const std::vector<unsigned char> in = weft::fuzz::record(data, size, tcp::kHelloBytes);
  const tcp::Hello h = tcp::decodeHello(in.data());
  // What the listener accepts (tcp_listen.cpp): magic and version; the token is compared separately.
  if (h.magic != tcp::kHelloMagic || h.version != tcp::kWireVersion) return;
  std::vector<unsigned char> out(tcp::kHelloBytes);
  tcp::encodeHello(h.jobToken, h.connectorId, out.data(), h.flags);
  const tcp::Hello again = tcp::decodeHello(out.data());
  FUZZ_CHECK(again.magic == h.magic && again.version == h.version && again.flags == h.flags &&
             again.jobToken == h.jobToken && again.connectorId == h.connectorId);
  FUZZ_CHECK(tcp::tokensEqual(h.jobToken, again.jobToken));
}

void header(const uint8_t* data, size_t size) {
  const std::vector<unsigned char> in = weft::fuzz::record(data, size, tcp::kHeaderBytes);
  const tcp::Header h = tcp::decodeHeader(in.data());
  if (h.magic != tcp::kMessageMagic) return;  // tcp_transfer.cpp fails the connection
  std::vector<unsigned char> out(tcp::kHeaderBytes);
  tcp::encodeHeader(h.tag, h.length, out.data());
  FUZZ_CHECK(out == in);
}

// The pair offer after a hello that announces one: the key and the listener handle re-encode to the same
// bytes (the handle is only compared, never decoded, by the acceptor).
void pairOffer(const uint8_t* data, size_t size) {
  const std::vector<unsigned char> in = weft::fuzz::record(data, size, tcp::kPairOfferBytes);
  const tcp::PairOffer offer = tcp::decodePairOffer(in.data());
  std::vector<unsigned char> out(tcp::kPairOfferBytes);
  tcp::encodePairOffer(offer.pairKey, offer.listenerHandle, out.data());
  FUZZ_CHECK(out == in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 4) {
    case 0:
      handle(data + 1, size - 1);
      break;
    case 1:
      hello(data + 1, size - 1);
      break;
    case 2:
      pairOffer(data + 1, size - 1);
      break;
    default:
      header(data + 1, size - 1);
  }
  return 0;
}
