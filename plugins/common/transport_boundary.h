// The C ABI boundary shared by the transport plugins: every call checks its arguments and lets no
// exception escape into Weft (each becomes a logged error code). A plugin names its parts in a traits
// struct and takes its weftTransportOps_v1 table from TransportBoundary<Traits>::kOps (and its
// weftTransportVecOps_v1 from vecOps(), where its Connection has postv()).
//
// Header-only and free of core/: plugins still include nothing of Weft but include/weft/plugin.h.
#ifndef WEFT_PLUGINS_COMMON_TRANSPORT_BOUNDARY_H
#define WEFT_PLUGINS_COMMON_TRANSPORT_BOUNDARY_H

#include <cstdint>
#include <exception>
#include <new>
#include <utility>

#include "weft/plugin.h"

namespace weft::plugins {

// A plugin's printf-style logger through host->log.
using LogFn = void (*)(const weftPluginHost_v1* host, weftLogLevel_t level, const char* format, ...);

template <typename F>
weftResult_t guarded(LogFn logf, const weftPluginHost_v1* host, const char* call, F&& body) noexcept {
  try {
    return std::forward<F>(body)();
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

// T provides: types Context (host()), ListenComm (member ctx), Connection (isSend(), ctx(), post(),
// test()), Request (state, conn) and RequestState (Free); `static constexpr LogFn logf`; and the setup
// functions listenOn, connectTo and acceptOne (see plugins/*/..._setup.h).
template <typename T>
struct TransportBoundary {
  using Context = typename T::Context;
  using ListenComm = typename T::ListenComm;
  using Connection = typename T::Connection;
  using Request = typename T::Request;

  template <typename F>
  static weftResult_t guarded(const weftPluginHost_v1* host, const char* call, F&& body) noexcept {
    return plugins::guarded(T::logf, host, call, std::forward<F>(body));
  }

  static const weftPluginHost_v1* hostOf(void* ctx) {
    return ctx != nullptr ? static_cast<Context*>(ctx)->host() : nullptr;
  }

  static weftResult_t badArgument(const weftPluginHost_v1* host, const char* call, const char* what) {
    T::logf(host, weftLogError, "%s: %s", call, what);
    return weftInvalidArgument;
  }

  static weftResult_t listen(void* ctx, uint64_t jobToken, void* handle, void** listenComm) {
    const weftPluginHost_v1* host = hostOf(ctx);
    if (ctx == nullptr || handle == nullptr || listenComm == nullptr) {
      return badArgument(host, "listen", "NULL ctx, handle or listenComm");
    }
    *listenComm = nullptr;
    return guarded(host, "listen", [&] {
      ListenComm* l = nullptr;
      weftResult_t r = T::listenOn(static_cast<Context*>(ctx), jobToken, static_cast<unsigned char*>(handle), &l);
      *listenComm = l;
      return r;
    });
  }

  static weftResult_t connect(void* ctx, const void* handle, uint64_t jobToken, uint64_t connectorId,
                              void** sendComm) {
    const weftPluginHost_v1* host = hostOf(ctx);
    if (ctx == nullptr || handle == nullptr || sendComm == nullptr) {
      return badArgument(host, "connect", "NULL ctx, handle or sendComm");
    }
    *sendComm = nullptr;
    return guarded(host, "connect", [&] {
      Connection* c = nullptr;
      weftResult_t r = T::connectTo(static_cast<Context*>(ctx), static_cast<const unsigned char*>(handle),
                                    jobToken, connectorId, &c);
      *sendComm = c;
      return r;
    });
  }

  static weftResult_t connectPaired(void* ctx, const void* handle, uint64_t jobToken, uint64_t connectorId,
                                    void* listenComm, uint64_t pairKey, void** sendComm) {
    const weftPluginHost_v1* host = hostOf(ctx);
    if (ctx == nullptr || handle == nullptr || listenComm == nullptr || sendComm == nullptr) {
      return badArgument(host, "connectPaired", "NULL ctx, handle, listenComm or sendComm");
    }
    *sendComm = nullptr;
    auto* l = static_cast<ListenComm*>(listenComm);
    if (l->ctx != ctx) return badArgument(host, "connectPaired", "listenComm is another context's");
    return guarded(host, "connectPaired", [&] {
      Connection* c = nullptr;
      weftResult_t r = T::connectPairedTo(static_cast<Context*>(ctx), static_cast<const unsigned char*>(handle),
                                          jobToken, connectorId, l, pairKey, &c);
      *sendComm = c;
      return r;
    });
  }

  static weftResult_t accept(void* listenComm, void** recvComm, uint64_t* connectorId) {
    if (listenComm == nullptr || recvComm == nullptr || connectorId == nullptr) return weftInvalidArgument;
    *recvComm = nullptr;
    auto* l = static_cast<ListenComm*>(listenComm);
    return guarded(l->ctx->host(), "accept", [&] {
      Connection* c = nullptr;
      weftResult_t r = T::acceptOne(l, &c, connectorId);
      *recvComm = c;
      return r;
    });
  }

  // Neither transport needs registered memory: the handle is NULL.
  static weftResult_t regMem(void* /*comm*/, void* /*data*/, size_t /*size*/, void** mhandle) {
    if (mhandle != nullptr) *mhandle = nullptr;
    return weftSuccess;
  }

  static weftResult_t deregMem(void* /*comm*/, void* /*mhandle*/) { return weftSuccess; }

  static weftResult_t post(void* comm, bool send, void* data, size_t size, uint32_t tag, void** request) {
    const char* call = send ? "isend" : "irecv";
    if (comm == nullptr || request == nullptr) return weftInvalidArgument;
    auto* c = static_cast<Connection*>(comm);
    *request = nullptr;
    if (c->isSend() != send) {
      T::logf(c->ctx()->host(), weftLogError, "%s: called on a %s connection", call,
              c->isSend() ? "send" : "receive");
      return weftInvalidUsage;
    }
    if (data == nullptr && size > 0) return badArgument(c->ctx()->host(), call, "NULL data with a size above 0");
    return guarded(c->ctx()->host(), call, [&] { return c->post(data, size, tag, request); });
  }

  static weftResult_t isend(void* sendComm, const void* data, size_t size, uint32_t tag, void* /*mhandle*/,
                            void** request) {
    // The payload is only read: the cast lets one queue type serve both directions.
    return post(sendComm, true, const_cast<void*>(data), size, tag, request);
  }

  static weftResult_t irecv(void* recvComm, void* data, size_t size, uint32_t tag, void* /*mhandle*/,
                            void** request) {
    return post(recvComm, false, data, size, tag, request);
  }

  // isendv and irecvv (weftTransportVecOps_v1, for plugins whose Connection has postv): the checks of post,
  // and pieces that are NULL only when empty and whose sizes add up without overflow.
  static weftResult_t postVectored(void* comm, bool send, const weftTransportIov_v1* iov, int count, uint32_t tag,
                                   void** request) {
    const char* call = send ? "isendv" : "irecvv";
    if (comm == nullptr || request == nullptr) return weftInvalidArgument;
    auto* c = static_cast<Connection*>(comm);
    *request = nullptr;
    const weftPluginHost_v1* host = c->ctx()->host();
    if (c->isSend() != send) {
      T::logf(host, weftLogError, "%s: called on a %s connection", call, c->isSend() ? "send" : "receive");
      return weftInvalidUsage;
    }
    if (iov == nullptr || count < 1) return badArgument(host, call, "NULL iov or a count below 1");
    size_t size = 0;
    for (int i = 0; i < count; ++i) {
      if (iov[i].data == nullptr && iov[i].size > 0) {
        return badArgument(host, call, "a piece with NULL data and a size above 0");
      }
      if (iov[i].size > SIZE_MAX - size) return badArgument(host, call, "the sizes add up past SIZE_MAX");
      size += iov[i].size;
    }
    return guarded(host, call, [&] { return c->postv(iov, count, size, tag, request); });
  }

  static weftResult_t isendv(void* sendComm, const weftTransportIov_v1* iov, int count, uint32_t tag,
                             void** request) {
    return postVectored(sendComm, true, iov, count, tag, request);
  }

  static weftResult_t irecvv(void* recvComm, const weftTransportIov_v1* iov, int count, uint32_t tag,
                             void** request) {
    return postVectored(recvComm, false, iov, count, tag, request);
  }

  static weftResult_t test(void* request, int* done, size_t* size) {
    if (request == nullptr || done == nullptr) return weftInvalidArgument;
    auto* r = static_cast<Request*>(request);
    if (r->state == T::RequestState::Free || r->conn == nullptr) return weftInvalidUsage;
    Connection* c = r->conn;
    return guarded(c->ctx()->host(), "test", [&] { return c->test(r, done, size); });
  }

  static weftResult_t waitReady(void* ctx, int timeoutUs) {
    if (ctx == nullptr) return weftInvalidArgument;
    return guarded(hostOf(ctx), "waitReady", [&] {
      static_cast<Context*>(ctx)->waitReady(timeoutUs);
      return weftSuccess;
    });
  }

  static weftResult_t closeConn(void* comm, bool send) {
    if (comm == nullptr) return weftSuccess;
    auto* c = static_cast<Connection*>(comm);
    if (c->isSend() != send) {
      T::logf(c->ctx()->host(), weftLogError, "%s: called on a %s connection", send ? "closeSend" : "closeRecv",
              c->isSend() ? "send" : "receive");
      return weftInvalidUsage;
    }
    return guarded(c->ctx()->host(), send ? "closeSend" : "closeRecv", [&] {
      delete c;
      return weftSuccess;
    });
  }

  static weftResult_t closeSend(void* sendComm) { return closeConn(sendComm, true); }
  static weftResult_t closeRecv(void* recvComm) { return closeConn(recvComm, false); }

  static weftResult_t closeListen(void* listenComm) {
    if (listenComm == nullptr) return weftSuccess;
    auto* l = static_cast<ListenComm*>(listenComm);
    return guarded(l->ctx->host(), "closeListen", [&] {
      delete l;
      return weftSuccess;
    });
  }

  static constexpr weftTransportOps_v1 kOps = {
      .listen = listen,
      .connect = connect,
      .accept = accept,
      .regMem = regMem,
      .deregMem = deregMem,
      .isend = isend,
      .irecv = irecv,
      .test = test,
      .waitReady = waitReady,
      .closeSend = closeSend,
      .closeRecv = closeRecv,
      .closeListen = closeListen,
  };

  // The vectored extension, exported as WEFT_TRANSPORT_VEC_SYMBOL_V1 by the plugins that have it. A class
  // template's member functions are compiled only where used, so a plugin without postv need not have one.
  static constexpr weftTransportVecOps_v1 vecOps() {
    return {.abiVersion = 1, .isendv = isendv, .irecvv = irecvv};
  }

  // The pairing extension (WEFT_TRANSPORT_PAIR_SYMBOL_V1), for the plugins with a connectPairedTo.
  static constexpr weftTransportPairOps_v1 pairOps() { return {.abiVersion = 1, .connectPaired = connectPaired}; }
};

}  // namespace weft::plugins

#endif  // WEFT_PLUGINS_COMMON_TRANSPORT_BOUNDARY_H
