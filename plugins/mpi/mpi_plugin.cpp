// The plugin's entry table: init/finalize/properties, the transport calls through the shared C ABI
// boundary (plugins/common/transport_boundary.h), and the backend calls (mpi_backend_abi.cpp).
//
// The plugin is both a transport and a backend. Weft's loader takes only transport-kind plugins today
// and sets up a backend from a transport that offers one; and a backend needs a transport underneath
// anyway (Weft's own setup exchange, Send/Recv, and what the backend declines). Over MPI point-to-point,
// WEFT_PLUGINS=mpi then runs a whole job through MPI.
#include <climits>

#include "common/parse_bytes.h"
#include "common/transport_boundary.h"
#include "mpi_conn.h"
#include "mpi_context.h"
#include "mpi_log.h"
#include "mpi_setup.h"
#include "weft/plugin.h"

namespace weft::mpi {

extern const weftBackendOps_v1 kBackendOps;

namespace {

// The parts of this plugin that the shared C ABI boundary calls.
struct Parts {
  using Context = weft::mpi::Context;
  using ListenComm = weft::mpi::ListenComm;
  using Connection = weft::mpi::Connection;
  using Request = weft::mpi::Request;
  using RequestState = weft::mpi::RequestState;
  static constexpr plugins::LogFn logf = weft::mpi::logf;
  static constexpr auto listenOn = weft::mpi::listenOn;
  static constexpr auto connectTo = weft::mpi::connectTo;
  static constexpr auto acceptOne = weft::mpi::acceptOne;
};
using Boundary = plugins::TransportBoundary<Parts>;

weftResult_t readSettings(const weftPluginHost_v1* host, Settings* settings) {
  settings->maxCallElements = static_cast<size_t>(INT_MAX);
  const char* text = host->getConfig != nullptr ? host->getConfig("WEFT_MPI_MAX_CALL_ELEMENTS") : nullptr;
  if (text != nullptr && *text != '\0') {
    unsigned long long value = 0;
    if (!plugins::parseBytes(text, &value) || value < 1 || value > static_cast<unsigned long long>(INT_MAX)) {
      logf(host, weftLogError, "init: WEFT_MPI_MAX_CALL_ELEMENTS=%s is not a count from 1 to %d", text, INT_MAX);
      return weftInvalidArgument;
    }
    settings->maxCallElements = static_cast<size_t>(value);
  }
  return weftSuccess;
}

weftResult_t mpiInit(const weftPluginHost_v1* host, void** ctx) {
  if (host == nullptr || ctx == nullptr) return weftInvalidArgument;
  *ctx = nullptr;
  return Boundary::guarded(host, "init", [&]() -> weftResult_t {
    if (host->abiVersion < 1) {
      logf(host, weftLogError, "init: host ABI version %u is not supported", host->abiVersion);
      return weftPluginError;
    }
    Settings settings;
    if (weftResult_t r = readSettings(host, &settings); r != weftSuccess) return r;
    // Without an MPI job the plugin still loads and declines every communicator (with the reason in the
    // log), so that WEFT_PLUGINS=mpi,tcp runs over tcp where there is no mpirun.
    *ctx = new Context(host, settings);
    return weftSuccess;
  });
}

weftResult_t mpiFinalize(void* ctx) {
  if (ctx == nullptr) return weftSuccess;
  return Boundary::guarded(Boundary::hostOf(ctx), "finalize", [&]() -> weftResult_t {
    delete static_cast<Context*>(ctx);
    Context::finalizeOwnedMpi();
    return weftSuccess;
  });
}

// cppcheck-suppress constParameter ; the signature is the plugin ABI's
weftResult_t mpiGetProperties(void* ctx, weftTransportProps_v1* props) {
  if (ctx == nullptr || props == nullptr) return weftInvalidArgument;
  props->name = kPluginName;
  props->reach = weftReachAny;
  props->latencyUs = 5.0;  // two MPI messages per Weft message (header, payload)
  props->bandwidthGBps = 5.0;
  props->maxConnsPerPeer = 0;
  return weftSuccess;
}

}  // namespace
}  // namespace weft::mpi

// The exported symbol; the loader looks it up by name.
extern "C" {
extern WEFT_API const weftPlugin_v1_t weftPlugin_v1;
}

const weftPlugin_v1_t weftPlugin_v1 = {
    .abiVersion = WEFT_PLUGIN_ABI_VERSION,
    .name = weft::mpi::kPluginName,
    .kind = weftPluginTransport,
    .init = weft::mpi::mpiInit,
    .finalize = weft::mpi::mpiFinalize,
    .getProperties = weft::mpi::mpiGetProperties,
    .transport = &weft::mpi::Boundary::kOps,
    .backend = &weft::mpi::kBackendOps,
};
