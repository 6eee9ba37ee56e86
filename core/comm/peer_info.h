// What each rank tells the others at bootstrap: its host, its pid, a listen handle per transport, and the
// CPUs it may run on.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bootstrap/bootstrap.h"
#include "weft/plugin.h"

namespace weft {

using NetHandle = std::array<unsigned char, WEFT_NET_HANDLE_BYTES>;

struct TransportHandle {
  std::string name;
  NetHandle handle{};
};

struct PeerInfo {
  std::string hostId;
  int pid = 0;
  std::vector<TransportHandle> transports;
  std::vector<uint64_t> cpuMask;  // the CPUs it may run on (topology::usableCpuMask); empty: not known
};

Blob encodePeerInfo(const PeerInfo& info);
// Throws weftRemoteError when the blob is malformed.
PeerInfo decodePeerInfo(const Blob& blob);

}  // namespace weft
