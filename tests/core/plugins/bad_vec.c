/* A transport that loads (its calls are stubs that fail) and exports a weftTransportVec_v1 the loader must
 * ignore, built twice: badvecversion (FIXTURE_VEC_VERSION 2: an extension of an ABI version this Weft does
 * not know) and badveccalls (FIXTURE_VEC_NO_IRECVV: version 1 without irecvv). Either loads without it. */
#include "weft/plugin.h"

#ifndef FIXTURE_NAME
#error "FIXTURE_NAME must name the plugin"
#endif
#ifndef FIXTURE_VEC_VERSION
#define FIXTURE_VEC_VERSION 1
#endif

static weftResult_t stubInit(const weftPluginHost_v1* host, void** ctx) {
  (void)host;
  *ctx = 0;
  return weftSuccess;
}

static weftResult_t stubFinalize(void* ctx) {
  (void)ctx;
  return weftSuccess;
}

static weftResult_t stubGetProperties(void* ctx, weftTransportProps_v1* props) {
  (void)ctx;
  props->name = FIXTURE_NAME;
  props->reach = weftReachSameHost;
  props->latencyUs = 1.0;
  props->bandwidthGBps = 1.0;
  props->maxConnsPerPeer = 0;
  return weftSuccess;
}

static weftResult_t stubListen(void* ctx, uint64_t jobToken, void* handle, void** listenComm) {
  (void)ctx, (void)jobToken, (void)handle, (void)listenComm;
  return weftInternalError;
}

static weftResult_t stubConnect(void* ctx, const void* handle, uint64_t jobToken, uint64_t connectorId,
                                void** sendComm) {
  (void)ctx, (void)handle, (void)jobToken, (void)connectorId, (void)sendComm;
  return weftInternalError;
}

static weftResult_t stubAccept(void* listenComm, void** recvComm, uint64_t* connectorId) {
  (void)listenComm, (void)recvComm, (void)connectorId;
  return weftInternalError;
}

static weftResult_t stubRegMem(void* comm, void* data, size_t size, void** mhandle) {
  (void)comm, (void)data, (void)size, (void)mhandle;
  return weftInternalError;
}

static weftResult_t stubDeregMem(void* comm, void* mhandle) {
  (void)comm, (void)mhandle;
  return weftInternalError;
}

static weftResult_t stubIsend(void* sendComm, const void* data, size_t size, uint32_t tag, void* mhandle,
                              void** request) {
  (void)sendComm, (void)data, (void)size, (void)tag, (void)mhandle, (void)request;
  return weftInternalError;
}

static weftResult_t stubIrecv(void* recvComm, void* data, size_t size, uint32_t tag, void* mhandle,
                              void** request) {
  (void)recvComm, (void)data, (void)size, (void)tag, (void)mhandle, (void)request;
  return weftInternalError;
}

static weftResult_t stubTest(void* request, int* done, size_t* size) {
  (void)request, (void)done, (void)size;
  return weftInternalError;
}

static weftResult_t stubWaitReady(void* ctx, int timeoutUs) {
  (void)ctx, (void)timeoutUs;
  return weftInternalError;
}

static weftResult_t stubClose(void* comm) {
  (void)comm;
  return weftInternalError;
}

static weftResult_t stubIsendv(void* sendComm, const weftTransportIov_v1* iov, int count, uint32_t tag,
                               void** request) {
  (void)sendComm, (void)iov, (void)count, (void)tag, (void)request;
  return weftInternalError;
}

#ifndef FIXTURE_VEC_NO_IRECVV
static weftResult_t stubIrecvv(void* recvComm, const weftTransportIov_v1* iov, int count, uint32_t tag,
                               void** request) {
  (void)recvComm, (void)iov, (void)count, (void)tag, (void)request;
  return weftInternalError;
}
#endif

static const weftTransportOps_v1 ops = {stubListen,    stubConnect, stubAccept, stubRegMem,
                                        stubDeregMem,  stubIsend,   stubIrecv,  stubTest,
                                        stubWaitReady, stubClose,   stubClose,  stubClose};

WEFT_API const weftPlugin_v1_t weftPlugin_v1 = {WEFT_PLUGIN_ABI_VERSION,
                                                FIXTURE_NAME,
                                                weftPluginTransport,
                                                stubInit,
                                                stubFinalize,
                                                stubGetProperties,
                                                &ops,
                                                0};

#ifdef FIXTURE_VEC_NO_IRECVV
WEFT_API const weftTransportVecOps_v1 weftTransportVec_v1 = {FIXTURE_VEC_VERSION, stubIsendv, 0};
#else
WEFT_API const weftTransportVecOps_v1 weftTransportVec_v1 = {FIXTURE_VEC_VERSION, stubIsendv, stubIrecvv};
#endif
