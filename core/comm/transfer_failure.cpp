#include "core/comm/transfer_failure.h"

#include <chrono>

#include "core/comm/comm.h"
#include "core/comm/connections.h"
#include "core/comm/control_channel.h"
#include "core/common/error.h"

namespace weft {
namespace {
// How long a rank whose connection to a peer broke waits for that peer's (or anyone's) fault notice, which
// says whether the peer died or gave up because of another rank.
constexpr auto kNoticeGrace = std::chrono::milliseconds(200);

void throwNoticedFault(weftComm& comm, std::string_view operation) {
  if (comm.control->awaitFault(kNoticeGrace)) comm.control->throwIfFault(operation);
}

const char* direction(bool isRecv) { return isRecv ? "receive from" : "send to"; }
}  // namespace

void failToStart(weftComm& comm, std::string_view operation, bool isRecv, int peer, weftResult_t result) {
  throwNoticedFault(comm, operation);
  fail(result, "{}: {} rank {} over {} failed to start ({})", operation, direction(isRecv), peer,
       comm.connections->transportName(peer), weftGetErrorString(result));
}

void failTransfer(weftComm& comm, std::string_view operation, bool isRecv, int peer, weftResult_t result) {
  throwNoticedFault(comm, operation);
  fail(result, "{}: {} rank {} failed: {} (the peer died, closed the connection or sent something unexpected)",
       operation, direction(isRecv), peer, weftGetErrorString(result));
}

void failSizeMismatch(const weftComm& comm, std::string_view operation, int peer, size_t received,
                      size_t expected) {
  fail(weftInvalidUsage, "{}: rank {} sent {} bytes where rank {} expected {} (mismatched calls across ranks?)",
       operation, peer, received, comm.rank, expected);
}

}  // namespace weft
