// The shm transport's wire (plugins/shm/shm_wire.h): the listen handle a peer sends through the bootstrap
// and the connector's hello. The first byte picks which; the rest is the fixed-size record, zero-padded, in a
// buffer of exactly that size. Invariants: an accepted handle names an abstract socket "weft-shm-" + 32
// lower-case hex digits (nothing else may be connected to) and re-encodes to the bytes it came from; a hello
// of this version re-encodes to a hello that decodes the same.
#include <algorithm>
#include <cstring>
#include <vector>

#include "plugins/shm/shm_wire.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace shm = weft::shm;

void handle(const uint8_t* data, size_t size) {
  const std::vector<unsigned char> in = weft::fuzz::record(data, size, WEFT_NET_HANDLE_BYTES);
  shm::Handle h;
  if (!shm::decodeHandle(in.data(), &h)) return;
  FUZZ_CHECK(h.name.size() == shm::kSocketNameBytes && h.name.rfind(shm::kSocketPrefix, 0) == 0);
  FUZZ_CHECK(h.name.find_first_not_of("0123456789abcdef", sizeof(shm::kSocketPrefix) - 1) == std::string::npos);
  std::vector<unsigned char> out(WEFT_NET_HANDLE_BYTES);
  shm::encodeHandle(h.name, h.pid, out.data());
  // The decoder ignores the zero fields; everything it read must come back.
  FUZZ_CHECK(std::memcmp(out.data(), in.data(), 12) == 0);
  FUZZ_CHECK(std::memcmp(out.data() + shm::kHandleNameOffset, in.data() + shm::kHandleNameOffset,
                         shm::kSocketNameBytes) == 0);
}

void hello(const uint8_t* data, size_t size) {
  const std::vector<unsigned char> in = weft::fuzz::record(data, size, shm::kHelloBytes);
  const shm::Hello h = shm::decodeHello(in.data());
  if (h.magic != shm::kHelloMagic || h.version != shm::kWireVersion) return;  // shm_listen.cpp refuses it
  std::vector<unsigned char> out(shm::kHelloBytes);
  shm::encodeHello(h, out.data());
  const shm::Hello again = shm::decodeHello(out.data());
  FUZZ_CHECK(again.magic == h.magic && again.version == h.version && again.flags == h.flags &&
             again.jobToken == h.jobToken && again.connectorId == h.connectorId && again.pid == h.pid &&
             again.ringBytes == h.ringBytes && again.probeAddress == h.probeAddress &&
             again.probeValue == h.probeValue);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    handle(data + 1, size - 1);
  } else {
    hello(data + 1, size - 1);
  }
  return 0;
}
