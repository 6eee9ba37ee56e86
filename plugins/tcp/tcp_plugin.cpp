// The plugin's entry table: init/finalize/properties and the C ABI boundary of every transport call
// (argument checks, no exception escapes).
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include "tcp_conn.h"
#include "tcp_context.h"
#include "tcp_iface.h"
#include "tcp_log.h"
#include "tcp_setup.h"
#include "tcp_socket.h"
#include "weft/plugin.h"

namespace weft::tcp {
namespace {

template <typename F>
weftResult_t guarded(const weftPluginHost_v1* host, const char* call, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    logf(host, weftLogError, "%s: out of memory", call);
    return weftSystemError;
  } catch (const std::exception& e) {
    logf(host, weftLogError, "%s: %s", call, e.what());
    return weftInternalError;
  } catch (...) {
    logf(host, weftLogError, "%s: unknown exception", call);
    return weftInternalError;
  }
}

const weftPluginHost_v1* hostOf(void* ctx) {
  return ctx != nullptr ? static_cast<Context*>(ctx)->host() : nullptr;
}

weftResult_t badArgument(const weftPluginHost_v1* host, const char* call, const char* what) {
  logf(host, weftLogError, "%s: %s", call, what);
  return weftInvalidArgument;
}

weftResult_t tcpInit(const weftPluginHost_v1* host, void** ctx) {
  if (host == nullptr || ctx == nullptr) return weftInvalidArgument;
  *ctx = nullptr;
  return guarded(host, "init", [&]() -> weftResult_t {
    if (host->abiVersion < 1) {
      logf(host, weftLogError, "init: host ABI version %u is not supported", host->abiVersion);
      return weftPluginError;
    }
    auto config = [&](const char* name) -> const char* {
      return host->getConfig != nullptr ? host->getConfig(name) : nullptr;
    };
    int family = AF_UNSPEC;
    if (const char* f = config("WEFT_SOCKET_FAMILY"); f != nullptr && *f != '\0') {
      if (std::strcmp(f, "AF_INET") == 0 || std::strcmp(f, "4") == 0 || std::strcmp(f, "ipv4") == 0) {
        family = AF_INET;
      } else if (std::strcmp(f, "AF_INET6") == 0 || std::strcmp(f, "6") == 0 || std::strcmp(f, "ipv6") == 0) {
        family = AF_INET6;
      } else {
        logf(host, weftLogError, "init: WEFT_SOCKET_FAMILY=%s is not AF_INET or AF_INET6", f);
        return weftInvalidArgument;
      }
    }
    long long bufferBytes = kDefaultSocketBuffer;
    if (const char* b = config("WEFT_SOCKET_BUFFER"); b != nullptr && *b != '\0' && !parseBytes(b, &bufferBytes)) {
      logf(host, weftLogError, "init: WEFT_SOCKET_BUFFER=%s is not a byte count (e.g. 4194304 or 4M)", b);
      return weftInvalidArgument;
    }
    const char* ifname = config("WEFT_SOCKET_IFNAME");
    Interface iface;
    std::string error;
    if (!selectInterface(ifname, family, &iface, &error)) {
      logf(host, weftLogError, "init: %s", error.c_str());
      return weftSystemError;
    }
    logf(host, weftLogInfo, "using interface %s, address %s (%s), socket buffers %lld bytes%s%s",
         iface.name.c_str(), formatAddress(iface.addr, false).c_str(),
         iface.addr.ss_family == AF_INET ? "IPv4" : "IPv6", bufferBytes,
         ifname != nullptr && *ifname != '\0' ? ", from WEFT_SOCKET_IFNAME=" : "",
         ifname != nullptr && *ifname != '\0' ? ifname : "");
    *ctx = new Context(host, std::move(iface), bufferBytes);
    return weftSuccess;
  });
}

weftResult_t tcpFinalize(void* ctx) {
  if (ctx == nullptr) return weftSuccess;
  return guarded(hostOf(ctx), "finalize", [&]() -> weftResult_t {
    auto* c = static_cast<Context*>(ctx);
    {
      std::lock_guard<std::mutex> lock(c->connectMutex);
      c->connects.clear();
    }
    if (size_t open = c->openSockets(); open > 0) {
      // Comms still point at the context: keep it rather than leave them dangling.
      logf(c->host(), weftLogWarn, "finalize: %zu sockets still open; close every comm first", open);
      return weftSuccess;
    }
    delete c;
    return weftSuccess;
  });
}

weftResult_t tcpGetProperties(void* ctx, weftTransportProps_v1* props) {
  if (ctx == nullptr || props == nullptr) return weftInvalidArgument;
  return guarded(hostOf(ctx), "getProperties", [&] {
    const Interface& iface = static_cast<Context*>(ctx)->iface();
    double speed = linkSpeedGBps(iface.name);
    props->name = kPluginName;
    props->reach = weftReachAny;
    props->latencyUs = iface.loopback ? 10.0 : 30.0;
    props->bandwidthGBps = speed > 0 ? speed : (iface.loopback ? 5.0 : 1.25);
    props->maxConnsPerPeer = 0;
    return weftSuccess;
  });
}

weftResult_t tcpListen(void* ctx, uint64_t jobToken, void* handle, void** listenComm) {
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

weftResult_t tcpConnect(void* ctx, const void* handle, uint64_t jobToken, uint64_t connectorId, void** sendComm) {
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

weftResult_t tcpAccept(void* listenComm, void** recvComm, uint64_t* connectorId) {
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

weftResult_t tcpRegMem(void* comm, void* data, size_t size, void** mhandle) {
  (void)comm;
  (void)data;
  (void)size;
  if (mhandle != nullptr) *mhandle = nullptr;
  return weftSuccess;
}

weftResult_t tcpDeregMem(void* comm, void* mhandle) {
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

weftResult_t tcpIsend(void* sendComm, const void* data, size_t size, uint32_t tag, void* mhandle, void** request) {
  (void)mhandle;
  // The payload is only read: the cast lets one queue type serve both directions.
  return post(sendComm, true, const_cast<void*>(data), size, tag, request);
}

weftResult_t tcpIrecv(void* recvComm, void* data, size_t size, uint32_t tag, void* mhandle, void** request) {
  (void)mhandle;
  return post(recvComm, false, data, size, tag, request);
}

weftResult_t tcpTest(void* request, int* done, size_t* size) {
  if (request == nullptr || done == nullptr) return weftInvalidArgument;
  auto* r = static_cast<Request*>(request);
  if (r->state == RequestState::Free || r->conn == nullptr) return weftInvalidUsage;
  Connection* c = r->conn;
  return guarded(c->ctx()->host(), "test", [&] { return c->test(r, done, size); });
}

weftResult_t tcpWaitReady(void* ctx, int timeoutUs) {
  if (ctx == nullptr) return weftInvalidArgument;
  return guarded(hostOf(ctx), "waitReady", [&] {
    static_cast<Context*>(ctx)->waitReady(timeoutUs);
    return weftSuccess;
  });
}

weftResult_t tcpCloseConn(void* comm, bool send) {
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

weftResult_t tcpCloseSend(void* sendComm) { return tcpCloseConn(sendComm, true); }
weftResult_t tcpCloseRecv(void* recvComm) { return tcpCloseConn(recvComm, false); }

weftResult_t tcpCloseListen(void* listenComm) {
  if (listenComm == nullptr) return weftSuccess;
  auto* l = static_cast<ListenComm*>(listenComm);
  return guarded(l->ctx->host(), "closeListen", [&] {
    delete l;
    return weftSuccess;
  });
}

const weftTransportOps_v1 kTransportOps = {
    .listen = tcpListen,
    .connect = tcpConnect,
    .accept = tcpAccept,
    .regMem = tcpRegMem,
    .deregMem = tcpDeregMem,
    .isend = tcpIsend,
    .irecv = tcpIrecv,
    .test = tcpTest,
    .waitReady = tcpWaitReady,
    .closeSend = tcpCloseSend,
    .closeRecv = tcpCloseRecv,
    .closeListen = tcpCloseListen,
};

}  // namespace
}  // namespace weft::tcp

// The one exported symbol; the loader looks it up by name.
extern "C" {
extern WEFT_API const weftPlugin_v1_t weftPlugin_v1;
}

const weftPlugin_v1_t weftPlugin_v1 = {
    .abiVersion = WEFT_PLUGIN_ABI_VERSION,
    .name = weft::tcp::kPluginName,
    .kind = weftPluginTransport,
    .init = weft::tcp::tcpInit,
    .finalize = weft::tcp::tcpFinalize,
    .getProperties = weft::tcp::tcpGetProperties,
    .transport = &weft::tcp::kTransportOps,
    .backend = nullptr,
};
