// What the plugin puts on the wire and in the addresses Weft passes around: the transport's listen
// handle, the hello a connector sends, the header before each message, and the backend's address.
// Fixed-size, trivially copyable; every process of one job runs the same build.
#ifndef WEFT_PLUGINS_MPI_WIRE_H
#define WEFT_PLUGINS_MPI_WIRE_H

#include <cstddef>
#include <cstdint>

#include "weft/plugin.h"

namespace weft::mpi {

inline constexpr uint64_t kHandleMagic = 0x5746544d50494831ULL;   // "WFTMPIH1"
inline constexpr uint64_t kHelloMagic = 0x5746544d5049484cULL;    // "WFTMPIHL"
inline constexpr uint32_t kHeaderMagic = 0x4d504948U;             // "MPIH"
inline constexpr uint64_t kAddressMagic = 0x5746544d50494241ULL;  // "WFTMPIBA"

// Who a process is in MPI: its MPI_COMM_WORLD rank, the world's size and the job's identity (a hash of
// the launcher's namespace), so that processes of different mpirun jobs are never taken for one world.
struct WorldId {
  uint64_t jobId;
  int32_t worldSize;
  int32_t worldRank;
};

// The transport's listen handle (WEFT_NET_HANDLE_BYTES).
struct ListenHandle {
  uint64_t magic;
  WorldId world;
  uint64_t listenerId;  // which listener of that process
  uint64_t token;       // the Weft job token it listens for
};
static_assert(sizeof(ListenHandle) <= WEFT_NET_HANDLE_BYTES);

// Sent by a connector to the listener's process on the control tag: "messages for your listener
// listenerId come from me on dataTag".
struct Hello {
  uint64_t magic;
  uint64_t token;
  uint64_t listenerId;
  uint64_t connectorId;
  int32_t dataTag;
  int32_t reserved;
};

// Precedes every message on a connection: the receiver checks tag and length before it posts the
// receives for the payload, so a wrong message fails the request instead of landing in the buffer.
struct MessageHeader {
  uint32_t magic;
  uint32_t tag;
  uint64_t size;
};

// The backend's address (WEFT_BACKEND_ADDRESS_BYTES): where the rank is in MPI_COMM_WORLD, and a random
// nonce; the nonces of all ranks make the tag of MPI_Comm_create_group, distinct per communicator.
struct BackendAddress {
  uint64_t magic;
  WorldId world;
  uint64_t nonce;
};
static_assert(sizeof(BackendAddress) <= WEFT_BACKEND_ADDRESS_BYTES);

}  // namespace weft::mpi

#endif  // WEFT_PLUGINS_MPI_WIRE_H
