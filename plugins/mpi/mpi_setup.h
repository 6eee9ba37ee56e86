// Setting up transport connections over MPI: a listener is an id in this process, published with the
// process's MPI_COMM_WORLD rank and job identity; a connector picks a data tag and tells the listener's
// process with a hello; accept takes the hellos that arrived for its listener.
#ifndef WEFT_PLUGINS_MPI_SETUP_H
#define WEFT_PLUGINS_MPI_SETUP_H

#include <cstdint>

#include "mpi_conn.h"
#include "mpi_context.h"

namespace weft::mpi {

struct ListenComm {
  Context* ctx;
  uint64_t id;
  uint64_t token;
  ~ListenComm() { ctx->removeListener(id); }
};

// Declines (weftInvalidUsage, logged once) when this process is not part of an MPI job, so that Weft
// carries the communicator over its other transports.
weftResult_t listenOn(Context* ctx, uint64_t jobToken, unsigned char* handle, ListenComm** listenComm);
// Fails with a message naming both jobs when the handle's process is in another MPI job.
weftResult_t connectTo(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                       Connection** sendComm);
weftResult_t acceptOne(ListenComm* listenComm, Connection** recvComm, uint64_t* connectorId);

}  // namespace weft::mpi

#endif  // WEFT_PLUGINS_MPI_SETUP_H
