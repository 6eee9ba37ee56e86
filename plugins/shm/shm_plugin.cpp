// The plugin's entry table: init/finalize/properties and the C ABI boundary of every transport call
// (argument checks, no exception escapes).
#include <strings.h>
#include <sys/random.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include "shm_cma.h"
#include "shm_conn.h"
#include "shm_context.h"
#include "shm_guard.h"
#include "shm_log.h"
#include "shm_node.h"
#include "shm_setup.h"
#include "shm_socket.h"
#include "weft/plugin.h"

namespace weft::shm {
namespace {

const weftPluginHost_v1* hostOf(void* ctx) {
  return ctx != nullptr ? static_cast<Context*>(ctx)->host() : nullptr;
}

weftResult_t badArgument(const weftPluginHost_v1* host, const char* call, const char* what) {
  logf(host, weftLogError, "%s: %s", call, what);
  return weftInvalidArgument;
}

// Parses a byte count with an optional K, M or G suffix (powers of 1024). Returns false when malformed.
bool parseBytes(const char* text, unsigned long long* out) {
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *text == '-') return false;
  int shift = 0;
  if (*end == 'k' || *end == 'K') shift = 10;
  if (*end == 'm' || *end == 'M') shift = 20;
  if (*end == 'g' || *end == 'G') shift = 30;
  if (shift != 0) ++end;
  if (*end != '\0' || value > (ULLONG_MAX >> shift)) return false;
  *out = value << shift;
  return true;
}

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

// The node backend's staging areas: four per rank and communicator (in and out, two parities).
constexpr size_t kDefaultStageBytes = size_t{32} * 1024;
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
    if (!parseBytes(b, &bytes) || bytes < kMinRingBytes || bytes > kMaxRingBytes || (bytes & (bytes - 1)) != 0) {
      logf(host, weftLogError, "init: WEFT_SHM_RING_BYTES=%s is not a power of two from 64K to 1G", b);
      return weftInvalidArgument;
    }
    settings->ringBytes = static_cast<size_t>(bytes);
  }
  settings->stageBytes = kDefaultStageBytes;
  if (const char* b = config("WEFT_SHM_STAGE_BYTES")) {
    unsigned long long bytes = 0;
    if (!parseBytes(b, &bytes) || bytes < 4096 || bytes > kMaxStageBytes) {
      logf(host, weftLogError, "init: WEFT_SHM_STAGE_BYTES=%s is not a size from 4K to 64M", b);
      return weftInvalidArgument;
    }
    settings->stageBytes = static_cast<size_t>(bytes + 63) / 64 * 64;
  }
  settings->reduceAllBytes = kDefaultReduceAllBytes;
  if (const char* b = config("WEFT_SHM_REDUCE_ALL_BYTES")) {
    unsigned long long bytes = 0;
    if (!parseBytes(b, &bytes) || bytes > kMaxStageBytes) {
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
  return weftSuccess;
}

weftResult_t shmInit(const weftPluginHost_v1* host, void** ctx) {
  if (host == nullptr || ctx == nullptr) return weftInvalidArgument;
  *ctx = nullptr;
  return guarded(host, "init", [&]() -> weftResult_t {
    if (host->abiVersion < 1) {
      logf(host, weftLogError, "init: host ABI version %u is not supported", host->abiVersion);
      return weftPluginError;
    }
    Settings settings;
    if (weftResult_t r = readSettings(host, &settings); r != weftSuccess) return r;
    std::string cmaOff;
    if (!settings.cma) {
      cmaOff = "WEFT_SHM_CMA=0";
    } else if (int err = cmaSelfTest(); err != 0) {
      cmaOff = std::string("process_vm_readv: ") + std::strerror(err);
      settings.cma = false;
    }
    uint64_t probe = 0;
    if (getrandom(&probe, sizeof(probe), 0) != static_cast<ssize_t>(sizeof(probe))) {
      probe = reinterpret_cast<uint64_t>(&probe) ^ 0x9e3779b97f4a7c15ULL;  // only has to be unlikely elsewhere
    }
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
  return guarded(hostOf(ctx), "finalize", [&]() -> weftResult_t {
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
  return guarded(hostOf(ctx), "getProperties", [&] {
    props->name = kPluginName;
    props->reach = weftReachSameHost;
    props->latencyUs = 1.0;
    props->bandwidthGBps = static_cast<Context*>(ctx)->cmaEnabled() ? 10.0 : 5.0;
    props->maxConnsPerPeer = 0;
    return weftSuccess;
  });
}

weftResult_t shmListen(void* ctx, uint64_t jobToken, void* handle, void** listenComm) {
  const weftPluginHost_v1* host = hostOf(ctx);
  if (ctx == nullptr || handle == nullptr || listenComm == nullptr) {
    return badArgument(host, "listen", "NULL ctx, handle or listenComm");
  }
  *listenComm = nullptr;
  return guarded(host, "listen", [&] {
    ListenComm* l = nullptr;
    weftResult_t r = listenOn(static_cast<Context*>(ctx), jobToken, static_cast<unsigned char*>(handle), &l);
    *listenComm = l;
    return r;
  });
}

weftResult_t shmConnect(void* ctx, const void* handle, uint64_t jobToken, uint64_t connectorId, void** sendComm) {
  const weftPluginHost_v1* host = hostOf(ctx);
  if (ctx == nullptr || handle == nullptr || sendComm == nullptr) {
    return badArgument(host, "connect", "NULL ctx, handle or sendComm");
  }
  *sendComm = nullptr;
  return guarded(host, "connect", [&] {
    Connection* c = nullptr;
    weftResult_t r = connectTo(static_cast<Context*>(ctx), static_cast<const unsigned char*>(handle), jobToken,
                               connectorId, &c);
    *sendComm = c;
    return r;
  });
}

weftResult_t shmAccept(void* listenComm, void** recvComm, uint64_t* connectorId) {
  if (listenComm == nullptr || recvComm == nullptr || connectorId == nullptr) return weftInvalidArgument;
  *recvComm = nullptr;
  auto* l = static_cast<ListenComm*>(listenComm);
  return guarded(l->ctx->host(), "accept", [&] {
    Connection* c = nullptr;
    weftResult_t r = acceptOne(l, &c, connectorId);
    *recvComm = c;
    return r;
  });
}

weftResult_t shmRegMem(void* comm, void* data, size_t size, void** mhandle) {
  (void)comm;
  (void)data;
  (void)size;
  if (mhandle != nullptr) *mhandle = nullptr;
  return weftSuccess;
}

weftResult_t shmDeregMem(void* comm, void* mhandle) {
  (void)comm;
  (void)mhandle;
  return weftSuccess;
}

weftResult_t post(void* comm, bool send, void* data, size_t size, uint32_t tag, void** request) {
  const char* call = send ? "isend" : "irecv";
  if (comm == nullptr || request == nullptr) return weftInvalidArgument;
  auto* c = static_cast<Connection*>(comm);
  *request = nullptr;
  if (c->isSend() != send) {
    logf(c->ctx()->host(), weftLogError, "%s: called on a %s connection", call, c->isSend() ? "send" : "receive");
    return weftInvalidUsage;
  }
  if (data == nullptr && size > 0) return badArgument(c->ctx()->host(), call, "NULL data with a size above 0");
  return guarded(c->ctx()->host(), call, [&] { return c->post(data, size, tag, request); });
}

weftResult_t shmIsend(void* sendComm, const void* data, size_t size, uint32_t tag, void* mhandle, void** request) {
  (void)mhandle;
  // The payload is only read: the cast lets one queue type serve both directions.
  return post(sendComm, true, const_cast<void*>(data), size, tag, request);
}

weftResult_t shmIrecv(void* recvComm, void* data, size_t size, uint32_t tag, void* mhandle, void** request) {
  (void)mhandle;
  return post(recvComm, false, data, size, tag, request);
}

weftResult_t shmTest(void* request, int* done, size_t* size) {
  if (request == nullptr || done == nullptr) return weftInvalidArgument;
  auto* r = static_cast<Request*>(request);
  if (r->state == RequestState::Free || r->conn == nullptr) return weftInvalidUsage;
  Connection* c = r->conn;
  return guarded(c->ctx()->host(), "test", [&] { return c->test(r, done, size); });
}

weftResult_t shmWaitReady(void* ctx, int timeoutUs) {
  if (ctx == nullptr) return weftInvalidArgument;
  return guarded(hostOf(ctx), "waitReady", [&] {
    static_cast<Context*>(ctx)->waitReady(timeoutUs);
    return weftSuccess;
  });
}

weftResult_t shmCloseConn(void* comm, bool send) {
  if (comm == nullptr) return weftSuccess;
  auto* c = static_cast<Connection*>(comm);
  if (c->isSend() != send) {
    logf(c->ctx()->host(), weftLogError, "%s: called on a %s connection", send ? "closeSend" : "closeRecv",
         c->isSend() ? "send" : "receive");
    return weftInvalidUsage;
  }
  return guarded(c->ctx()->host(), send ? "closeSend" : "closeRecv", [&] {
    delete c;
    return weftSuccess;
  });
}

weftResult_t shmCloseSend(void* sendComm) { return shmCloseConn(sendComm, true); }
weftResult_t shmCloseRecv(void* recvComm) { return shmCloseConn(recvComm, false); }

weftResult_t shmCloseListen(void* listenComm) {
  if (listenComm == nullptr) return weftSuccess;
  auto* l = static_cast<ListenComm*>(listenComm);
  return guarded(l->ctx->host(), "closeListen", [&] {
    delete l;
    return weftSuccess;
  });
}

const weftTransportOps_v1 kTransportOps = {
    .listen = shmListen,
    .connect = shmConnect,
    .accept = shmAccept,
    .regMem = shmRegMem,
    .deregMem = shmDeregMem,
    .isend = shmIsend,
    .irecv = shmIrecv,
    .test = shmTest,
    .waitReady = shmWaitReady,
    .closeSend = shmCloseSend,
    .closeRecv = shmCloseRecv,
    .closeListen = shmCloseListen,
};

}  // namespace
}  // namespace weft::shm

// The one exported symbol; the loader looks it up by name.
extern "C" {
extern WEFT_API const weftPlugin_v1_t weftPlugin_v1;
}

const weftPlugin_v1_t weftPlugin_v1 = {
    .abiVersion = WEFT_PLUGIN_ABI_VERSION,
    .name = weft::shm::kPluginName,
    .kind = weftPluginTransport,
    .init = weft::shm::shmInit,
    .finalize = weft::shm::shmFinalize,
    .getProperties = weft::shm::shmGetProperties,
    .transport = &weft::shm::kTransportOps,
    .backend = &weft::shm::kNodeBackendOps,  // whole collectives among ranks of one host
};
