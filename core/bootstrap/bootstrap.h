// Bootstrap: how the ranks of a new communicator find each other.
//
// A root (a thread started by weftGetUniqueId, or by rank 0 in weftCommInitFromEnv) listens on one
// address. Every rank connects once and sends its rank, the rank count, the job token and a blob (its
// host identity and its transports' listen handles). When all ranks are in, the root sends every rank
// all blobs and exits. One round trip per rank; nothing listens after init.
#pragma once

#include <cstdint>
#include <vector>

#include "core/bootstrap/socket.h"

namespace weft {

using Blob = std::vector<unsigned char>;

// Starts the root in a background thread on an already listening socket.
void startBootstrapRoot(Socket listener, uint64_t token);

// When this process runs the root for `token`, waits until the root has answered every rank: a rank
// that got its answer first must not exit and take the root's thread with it while others still wait.
void waitForLocalBootstrapRoot(uint64_t token);

// Sends this rank's blob to the root and returns every rank's blob, indexed by rank.
std::vector<Blob> bootstrapExchange(const SocketAddress& root, uint64_t token, int nranks, int rank,
                                    const Blob& blob);

}  // namespace weft
