// The C ABI boundary of the backend (mpi_backend.h): argument checks, and no exception escapes.
#include <exception>
#include <memory>
#include <string>

#include "common/transport_boundary.h"
#include "mpi_backend.h"
#include "mpi_context.h"
#include "mpi_log.h"

namespace weft::mpi {
namespace {

// No exception escapes; one that is caught is logged and becomes what lastError says.
template <typename F>
weftResult_t guardedCall(BackendComm* comm, const char* call, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    comm->setError(std::string(call) + ": " + e.what());
  } catch (...) {
    comm->setError(std::string(call) + ": unknown exception");
  }
  logf(comm->host(), weftLogError, "%s", comm->lastError());
  return weftInternalError;
}

weftResult_t backendPrepare(void* ctx, const weftBackendComm_v1* info, void* address, void** bcomm) {
  if (ctx == nullptr || info == nullptr || address == nullptr || bcomm == nullptr) return weftInvalidArgument;
  *bcomm = nullptr;
  auto* c = static_cast<Context*>(ctx);
  if (info->nranks < 1 || info->rank < 0 || info->rank >= info->nranks) {
    logf(c->host(), weftLogError, "commPrepare: rank %d of %d", info->rank, info->nranks);
    return weftInvalidArgument;
  }
  if (!c->hasJob()) {
    logf(c->host(), weftLogDebug, "backend not offered: %s", c->noJobReason().c_str());
    return weftInvalidUsage;
  }
  return plugins::guarded(logf, c->host(), "commPrepare", [&] {
    auto comm = std::make_unique<BackendComm>(c, *info);
    comm->address(static_cast<unsigned char*>(address));
    *bcomm = comm.release();
    return weftSuccess;
  });
}

weftResult_t backendConnect(void* bcomm, const void* addresses) {
  if (bcomm == nullptr || addresses == nullptr) return weftInvalidArgument;
  auto* comm = static_cast<BackendComm*>(bcomm);
  return guardedCall(comm, "commConnect",
                     [&] { return comm->connect(static_cast<const unsigned char*>(addresses)); });
}

weftResult_t backendDestroy(void* bcomm) {
  return plugins::guarded(logf, nullptr, "commDestroy", [&] {
    delete static_cast<BackendComm*>(bcomm);
    return weftSuccess;
  });
}

int backendSupports(void* bcomm, const weftBackendOp_v1* op) {
  if (bcomm == nullptr || op == nullptr) return 0;
  return static_cast<BackendComm*>(bcomm)->supports(*op) ? 1 : 0;
}

weftResult_t backendRun(void* bcomm, const weftBackendOp_v1* op) {
  if (bcomm == nullptr || op == nullptr) return weftInvalidArgument;
  auto* comm = static_cast<BackendComm*>(bcomm);
  return guardedCall(comm, "run", [&] { return comm->run(*op); });
}

const char* backendLastError(void* bcomm) {
  return bcomm == nullptr ? "no backend communicator" : static_cast<BackendComm*>(bcomm)->lastError();
}

}  // namespace

extern const weftBackendOps_v1 kBackendOps;
const weftBackendOps_v1 kBackendOps = {
    .commPrepare = backendPrepare,
    .commConnect = backendConnect,
    .commDestroy = backendDestroy,
    .supports = backendSupports,
    .run = backendRun,
    .lastError = backendLastError,
};

}  // namespace weft::mpi
