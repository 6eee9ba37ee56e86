#include "mpi_setup.h"

#include <atomic>
#include <cstring>
#include <memory>

#include "mpi_log.h"

namespace weft::mpi {

weftResult_t listenOn(Context* ctx, uint64_t jobToken, unsigned char* handle, ListenComm** listenComm) {
  if (!ctx->hasJob()) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) {
      logf(ctx->host(), weftLogWarn, "not used: %s", ctx->noJobReason().c_str());
    }
    return weftInvalidUsage;
  }
  // Built in place: a temporary ListenComm would unregister the listener when it goes.
  std::unique_ptr<ListenComm> listener(new ListenComm{ctx, ctx->addListener(jobToken), jobToken});
  ListenHandle h{};
  h.magic = kHandleMagic;
  h.world = WorldId{ctx->jobId(), ctx->worldSize(), ctx->worldRank()};
  h.listenerId = listener->id;
  h.token = jobToken;
  std::memset(handle, 0, WEFT_NET_HANDLE_BYTES);
  std::memcpy(handle, &h, sizeof(h));
  *listenComm = listener.release();
  return weftSuccess;
}

weftResult_t connectTo(Context* ctx, const unsigned char* handle, uint64_t jobToken, uint64_t connectorId,
                       Connection** sendComm) {
  ListenHandle h{};
  std::memcpy(&h, handle, sizeof(h));
  if (h.magic != kHandleMagic) {
    logf(ctx->host(), weftLogError, "connect: the peer's handle is not an mpi plugin handle");
    return weftInvalidArgument;
  }
  if (!ctx->hasJob() || h.world.jobId != ctx->jobId() || h.world.worldSize != ctx->worldSize() ||
      h.world.worldRank < 0 || h.world.worldRank >= ctx->worldSize()) {
    logf(ctx->host(), weftLogError,
         "connect: the peer is MPI_COMM_WORLD rank %d of %d in job %016llx, this process rank %d of %d in job "
         "%016llx: ranks of one Weft communicator must be started by one mpirun to use the mpi plugin",
         h.world.worldRank, h.world.worldSize, static_cast<unsigned long long>(h.world.jobId), ctx->worldRank(),
         ctx->worldSize(), static_cast<unsigned long long>(ctx->jobId()));
    return weftInvalidUsage;
  }
  if (h.token != jobToken) {
    logf(ctx->host(), weftLogError, "connect: the peer listens for another Weft job token");
    return weftInvalidUsage;
  }
  auto conn = std::make_unique<Connection>(ctx, true, h.world.worldRank, ctx->nextDataTag());
  Hello hello{kHelloMagic, jobToken, h.listenerId, connectorId, 0, 0};
  hello.dataTag = conn->dataTag();
  conn->sendHello(hello);
  *sendComm = conn.release();  // ready at once: MPI queues what is sent before the peer accepts
  return weftSuccess;
}

weftResult_t acceptOne(ListenComm* listenComm, Connection** recvComm, uint64_t* connectorId) {
  Hello hello{};
  int source = -1;
  if (!listenComm->ctx->takeHello(listenComm->id, &hello, &source)) return weftSuccess;
  *recvComm = new Connection(listenComm->ctx, false, source, hello.dataTag);
  *connectorId = hello.connectorId;
  return weftSuccess;
}

}  // namespace weft::mpi
