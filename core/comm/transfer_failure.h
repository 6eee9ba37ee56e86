// What a failed message says, alike from a CommChannel and from the short path of Send/Recv groups
// (core/collectives/point_to_point.h). A broken connection may be the peer's death or the peer giving up
// because of another rank's failure, which that peer's fault notice names: each waits a moment for a notice,
// and throws it instead when one comes.
#pragma once

#include <cstddef>
#include <string_view>

#include "weft/weft.h"

struct weftComm;

namespace weft {

// The transport refused to start a send or receive (`result`).
[[noreturn]] void failToStart(weftComm& comm, std::string_view operation, bool isRecv, int peer,
                              weftResult_t result);
// A started send or receive failed (`result`).
[[noreturn]] void failTransfer(weftComm& comm, std::string_view operation, bool isRecv, int peer,
                               weftResult_t result);
// A receive of `expected` bytes got a message of `received` bytes from `peer`.
[[noreturn]] void failSizeMismatch(const weftComm& comm, std::string_view operation, int peer, size_t received,
                                   size_t expected);

}  // namespace weft
