// What each rank tells the others at bootstrap: its host, its pid, and a listen handle per transport.
#pragma once

#include <array>
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
};

Blob encodePeerInfo(const PeerInfo& info);
// Throws weftRemoteError when the blob is malformed.
PeerInfo decodePeerInfo(const Blob& blob);

}  // namespace weft
