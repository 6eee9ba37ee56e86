// The backend half of the plugin: a Weft communicator's collectives run by MPI on a communicator of
// exactly its ranks, in Weft's rank order (MPI_Comm_create_group over MPI_COMM_WORLD: collective only
// over those ranks, so split communicators work too). Calls are MPI's non-blocking collectives, waited
// for by polling, so that weftCommAbort and WEFT_TIMEOUT end a wait and a waiting rank gives its core away.
#ifndef WEFT_PLUGINS_MPI_BACKEND_H
#define WEFT_PLUGINS_MPI_BACKEND_H

#include <mpi.h>

#include <cstdint>
#include <string>

#include "mpi_context.h"
#include "mpi_wire.h"
#include "weft/plugin.h"

namespace weft::mpi {

class BackendComm {
 public:
  BackendComm(Context* ctx, const weftBackendComm_v1& info);
  ~BackendComm();
  BackendComm(const BackendComm&) = delete;
  BackendComm& operator=(const BackendComm&) = delete;

  // Fills the WEFT_BACKEND_ADDRESS_BYTES address: where this rank is in MPI_COMM_WORLD.
  void address(unsigned char* out) const;
  // With every rank's address: checks they are one MPI world (else fails, on every rank alike, without
  // calling MPI collectively) and makes the MPI communicator.
  weftResult_t connect(const unsigned char* addresses);
  // Depends only on the operation and the settings, equal on every rank.
  bool supports(const weftBackendOp_v1& op) const;
  weftResult_t run(const weftBackendOp_v1& op);
  const char* lastError() const { return error_.c_str(); }
  const weftPluginHost_v1* host() const { return ctx_->host(); }
  // Records why a call failed when the failure was an exception caught at the C ABI boundary.
  void setError(std::string message) { error_ = std::move(message); }

 private:
  weftResult_t fail(weftResult_t code, std::string message);
  // A failed MPI call: weftSystemError, and lastError names the call and gives MPI's error string.
  weftResult_t mpiFailed(const char* call, int rc);
  // Waits for a started collective, polling weftCommAbort and WEFT_TIMEOUT.
  weftResult_t wait(MPI_Request* request, const char* call);
  // Starts one MPI call (under the MPI lock) and waits for it.
  template <typename Start>
  weftResult_t call(const char* name, Start&& start);

  weftResult_t allReduce(const weftBackendOp_v1& op);
  weftResult_t broadcast(const weftBackendOp_v1& op);
  weftResult_t reduce(const weftBackendOp_v1& op);
  weftResult_t allGather(const weftBackendOp_v1& op);
  weftResult_t reduceScatter(const weftBackendOp_v1& op);
  weftResult_t allToAll(const weftBackendOp_v1& op);

  Context* ctx_;
  weftBackendComm_v1 info_;
  BackendAddress mine_{};
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string error_;
  // Set when a wait was abandoned (abort or timeout): MPI cannot cancel a collective, so the
  // communicator is unusable from then on.
  bool abandoned_ = false;
  unsigned long long collectivesRun_ = 0;
};

template <typename Start>
weftResult_t BackendComm::call(const char* name, Start&& start) {
  MPI_Request request = MPI_REQUEST_NULL;
  int rc;
  {
    auto mpi = ctx_->mpiLock();
    rc = start(&request);
  }
  if (rc != MPI_SUCCESS) return mpiFailed(name, rc);
  return wait(&request, name);
}

}  // namespace weft::mpi

#endif  // WEFT_PLUGINS_MPI_BACKEND_H
