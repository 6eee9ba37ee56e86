// The blob each rank sends at bootstrap (core/comm/peer_info.cpp decodePeerInfo), as another rank receives
// it. An accepted blob stays within the decoder's bounds (strings of at most 1024 bytes, at most 16
// transports, CPU masks of at most 16 words), and re-encoding what was decoded gives the blob's own bytes (the
// decoder ignores what follows them), which decode to the same peer info.
#include <algorithm>

#include "core/comm/peer_info.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool same(const weft::PeerInfo& a, const weft::PeerInfo& b) {
  if (a.hostId != b.hostId || a.pid != b.pid || a.transports.size() != b.transports.size() ||
      a.cpuMask != b.cpuMask)
    return false;
  for (size_t i = 0; i < a.transports.size(); ++i) {
    if (a.transports[i].name != b.transports[i].name || a.transports[i].handle != b.transports[i].handle)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const weft::Blob blob(data, data + size);
  weft::PeerInfo info;
  if (!weft::fuzz::accepts(weftRemoteError, [&] { info = weft::decodePeerInfo(blob); })) return 0;
  FUZZ_CHECK(info.hostId.size() <= 1024 && info.transports.size() <= 16 && info.cpuMask.size() <= 16);
  for (const weft::TransportHandle& t : info.transports) FUZZ_CHECK(t.name.size() <= 1024);
  const weft::Blob encoded = weft::encodePeerInfo(info);
  FUZZ_CHECK(encoded.size() <= blob.size() && std::equal(encoded.begin(), encoded.end(), blob.begin()));
  weft::PeerInfo again;
  FUZZ_CHECK(weft::fuzz::accepts(weftSuccess, [&] { again = weft::decodePeerInfo(encoded); }));
  FUZZ_CHECK(same(info, again));
  return 0;
}
