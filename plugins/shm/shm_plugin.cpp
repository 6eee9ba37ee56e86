// The plugin's entry table: init/finalize/properties, and the transport calls through the shared C ABI
// boundary (plugins/common/transport_boundary.h: argument checks, no exception escapes).
#include <strings.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "common/parse_bytes.h"
#include "common/transport_boundary.h"
#include "shm_cma.h"
#include "shm_conn.h"
#include "shm_context.h"
#include "shm_log.h"
#include "shm_node.h"
#include "shm_setup.h"
#include "shm_socket.h"
#include "weft/plugin.h"

namespace weft::shm {
namespace {

// The parts of this plugin that the shared C ABI boundary (plugins/common/transport_boundary.h) calls.
struct Parts {
  using Context = weft::shm::Context;
  using ListenComm = weft::shm::ListenComm;
  using Connection = weft::shm::Connection;
  using Request = weft::shm::Request;
  using RequestState = weft::shm::RequestState;
  static constexpr plugins::LogFn logf = weft::shm::logf;
  static constexpr auto listenOn = weft::shm::listenOn;
  static constexpr auto connectTo = weft::shm::connectTo;
  static constexpr auto acceptOne = weft::shm::acceptOne;
};
using Boundary = plugins::TransportBoundary<Parts>;

// WEFT_SHM_CMA: unset or 1/on/yes/true uses CMA where it works; 0/off/no/false copies everything through
// the segment (to test that path, or where process_vm_readv is unwanted).
bool parseSwitch(const char* text, bool* out) {
  for (const char* on : {"1", "on", "yes", "true"}) {
    if (strcasecmp(text, on) == 0) {
      *out = true;
      return true;
    }
  }
  for (const char* off : {"0", "off", "no", "false"}) {
    if (strcasecmp(text, off) == 0) {
      *out = false;
      return true;
    }
  }
  return false;
}

// The node backend's staging ring: 8 times this per rank and communicator (shm_node.h).
constexpr size_t kDefaultStageBytes = size_t{256} * 1024;
constexpr size_t kMaxStageBytes = 64ull << 20;
constexpr size_t kDefaultReduceAllBytes = size_t{16} * 1024;

weftResult_t readSettings(const weftPluginHost_v1* host, Settings* settings) {
  auto config = [&](const char* name) -> const char* {
    const char* value = host->getConfig != nullptr ? host->getConfig(name) : nullptr;
    return value != nullptr && *value != '\0' ? value : nullptr;
  };
  settings->ringBytes = kDefaultRingBytes;
  if (const char* b = config("WEFT_SHM_RING_BYTES")) {
    unsigned long long bytes = 0;
    if (!plugins::parseBytes(b, &bytes) || bytes < kMinRingBytes || bytes > kMaxRingBytes ||
        (bytes & (bytes - 1)) != 0) {
      logf(host, weftLogError, "init: WEFT_SHM_RING_BYTES=%s is not a power of two from 64K to 1G", b);
      return weftInvalidArgument;
    }
    settings->ringBytes = static_cast<size_t>(bytes);
  }
  settings->stageBytes = kDefaultStageBytes;
  if (const char* b = config("WEFT_SHM_STAGE_BYTES")) {
    unsigned long long bytes = 0;
    if (!plugins::parseBytes(b, &bytes) || bytes < 4096 || bytes > kMaxStageBytes) {
      logf(host, weftLogError, "init: WEFT_SHM_STAGE_BYTES=%s is not a size from 4K to 64M", b);
      return weftInvalidArgument;
    }
    settings->stageBytes = static_cast<size_t>(bytes + 63) / 64 * 64;
  }
  settings->reduceAllBytes = kDefaultReduceAllBytes;
  if (const char* b = config("WEFT_SHM_REDUCE_ALL_BYTES")) {
    unsigned long long bytes = 0;
    if (!plugins::parseBytes(b, &bytes) || bytes > kMaxStageBytes) {
      logf(host, weftLogError, "init: WEFT_SHM_REDUCE_ALL_BYTES=%s is not a size up to 64M", b);
      return weftInvalidArgument;
    }
    settings->reduceAllBytes = static_cast<size_t>(bytes);
  }
  settings->nodeCollectives = true;
  if (const char* c = config("WEFT_SHM_COLL"); c != nullptr && !parseSwitch(c, &settings->nodeCollectives)) {
    logf(host, weftLogError, "init: WEFT_SHM_COLL=%s is not 0 or 1", c);
    return weftInvalidArgument;
  }
  settings->cma = true;
  if (const char* c = config("WEFT_SHM_CMA"); c != nullptr && !parseSwitch(c, &settings->cma)) {
    logf(host, weftLogError, "init: WEFT_SHM_CMA=%s is not 0 or 1", c);
    return weftInvalidArgument;
  }
  settings->cmaCost = CmaCost::Measure;
  if (const char* c = config("WEFT_SHM_CMA_COST")) {
    if (std::strcmp(c, "measure") == 0) {
      settings->cmaCost = CmaCost::Measure;
    } else if (std::strcmp(c, "high") == 0) {
      settings->cmaCost = CmaCost::High;
    } else if (std::strcmp(c, "low") == 0) {
      settings->cmaCost = CmaCost::Low;
    } else {
      logf(host, weftLogError, "init: WEFT_SHM_CMA_COST=%s is not measure, high or low", c);
      return weftInvalidArgument;
    }
  }
  return weftSuccess;
}

weftResult_t shmInit(const weftPluginHost_v1* host, void** ctx) {
  if (host == nullptr || ctx == nullptr) return weftInvalidArgument;
  *ctx = nullptr;
  return Boundary::guarded(host, "init", [&]() -> weftResult_t {
    if (host->abiVersion < 1) {
      logf(host, weftLogError, "init: host ABI version %u is not supported", host->abiVersion);
      return weftPluginError;
    }
    Settings settings;
    if (weftResult_t r = readSettings(host, &settings); r != weftSuccess) return r;
    std::string cmaOff;
    if (settings.cma) allowPeersToRead();  // before any peer probes us (at connection setup)
    if (!settings.cma) {
      cmaOff = "WEFT_SHM_CMA=0";
    } else if (int err = cmaSelfTest(); err != 0) {
      cmaOff = std::string("process_vm_readv: ") + std::strerror(err);
      settings.cma = false;
    }
    uint64_t probe = randomWord(&settings);
    Mapping doorbell;
    std::string error;
    int fd = createSegment("weft-shm-doorbell", kDoorbellBytes, &doorbell, &error);
    if (fd < 0) {
      logf(host, weftLogError, "init: %s", error.c_str());
      return weftSystemError;
    }
    static_cast<DoorbellPage*>(doorbell.data())->magic = kDoorbellMagic;
    Context* c;
    try {
      c = new Context(host, settings, fd, std::move(doorbell), probe);
    } catch (...) {
      closeFd(fd);
      throw;
    }
    if (!cmaOff.empty()) c->cmaUnavailable(cmaOff);
    logf(host, weftLogDebug, "%zu-byte ring per connection; messages above %zu bytes %s", settings.ringBytes,
         kInlineMaxBytes, settings.cma ? "by CMA (single copy)" : "in pieces through the ring");
    *ctx = c;
    return weftSuccess;
  });
}

weftResult_t shmFinalize(void* ctx) {
  if (ctx == nullptr) return weftSuccess;
  return Boundary::guarded(Boundary::hostOf(ctx), "finalize", [&]() -> weftResult_t {
    auto* c = static_cast<Context*>(ctx);
    {
      std::lock_guard<std::mutex> lock(c->connectMutex);
      c->connects.clear();
    }
    if (size_t open = c->openComms(); open > 0) {
      // Comms still point at the context: keep it rather than leave them dangling.
      logf(c->host(), weftLogWarn, "finalize: %zu comms still open; close every comm first", open);
      return weftSuccess;
    }
    delete c;
    return weftSuccess;
  });
}

weftResult_t shmGetProperties(void* ctx, weftTransportProps_v1* props) {
  if (ctx == nullptr || props == nullptr) return weftInvalidArgument;
  return Boundary::guarded(Boundary::hostOf(ctx), "getProperties", [&] {
    props->name = kPluginName;
    props->reach = weftReachSameHost;
    props->latencyUs = 1.0;
    props->bandwidthGBps = static_cast<Context*>(ctx)->cmaEnabled() ? 10.0 : 5.0;
    props->maxConnsPerPeer = 0;
    return weftSuccess;
  });
}

}  // namespace
}  // namespace weft::shm

// The exported symbols; the loader looks them up by name (the backend's list extension is exported by
// shm_backend.cpp).
extern "C" {
extern WEFT_API const weftPlugin_v1_t weftPlugin_v1;
extern WEFT_API const weftTransportVecOps_v1 weftTransportVec_v1;
}

const weftPlugin_v1_t weftPlugin_v1 = {
    .abiVersion = WEFT_PLUGIN_ABI_VERSION,
    .name = weft::shm::kPluginName,
    .kind = weftPluginTransport,
    .init = weft::shm::shmInit,
    .finalize = weft::shm::shmFinalize,
    .getProperties = weft::shm::shmGetProperties,
    .transport = &weft::shm::Boundary::kOps,
    .backend = &weft::shm::kNodeBackendOps,  // whole collectives among ranks of one host
};

// Vectored messages: fused collectives on their calls' buffers, through the ring or by CMA from the pieces.
const weftTransportVecOps_v1 weftTransportVec_v1 = weft::shm::Boundary::vecOps();
