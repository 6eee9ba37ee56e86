/*
 * Weft plugin ABI.
 *
 * A plugin is a shared object that exports one symbol, `weftPlugin_v1` of type `weftPlugin_v1_t` (later
 * `weftPlugin_v2`, ...; the loader probes newest first and adapts older versions). The struct is versioned: fields
 * are only ever added in a new version, never changed in place.
 *
 * A transport moves bytes between two ranks over unidirectional connections, in the style of NCCL's net
 * plugins: a receiver listens and publishes an opaque handle; a sender connects to the handle and gets a
 * send connection; the receiver accepts it and gets a receive connection. Messages on one connection are
 * matched in order. Every call is non-blocking.
 */
#ifndef WEFT_PLUGIN_H
#define WEFT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_PLUGIN_ABI_VERSION 1
#define WEFT_PLUGIN_SYMBOL_V1 "weftPlugin_v1"

/* Bytes of the opaque address a transport's listener publishes to its peers. */
#define WEFT_NET_HANDLE_BYTES 64

typedef enum { weftPluginTransport = 0, weftPluginBackend = 1 } weftPluginKind_t;

typedef enum { weftLogTrace = 0, weftLogDebug, weftLogInfo, weftLogWarn, weftLogError } weftLogLevel_t;

/* What Weft gives a plugin at init. */
typedef struct {
  unsigned int abiVersion; /* WEFT_PLUGIN_ABI_VERSION of the loading library */
  /* Logs through Weft's logger, with its prefix (host, pid, rank). */
  void (*log)(weftLogLevel_t level, const char* pluginName, const char* message);
  /* Reads a WEFT_* setting (environment or tuning file); NULL when unset. */
  const char* (*getConfig)(const char* name);
} weftPluginHost_v1;

/* Which peers a transport can reach. */
typedef enum {
  weftReachAny = 0,     /* any host (tcp, verbs) */
  weftReachSameHost = 1 /* only ranks on the same host (shm) */
} weftReach_t;

typedef struct {
  const char* name;
  weftReach_t reach;
  double latencyUs;     /* estimate for a small message */
  double bandwidthGBps; /* estimate for a large message */
  int maxConnsPerPeer;  /* 0 = no limit */
} weftTransportProps_v1;

typedef struct {
  /* Listens for connections of one job. Fills handle (WEFT_NET_HANDLE_BYTES) with what a peer needs to
   * connect. Connections that do not present jobToken are refused. */
  weftResult_t (*listen)(void* ctx, uint64_t jobToken, void* handle, void** listenComm);
  /* Non-blocking: returns weftSuccess with *sendComm == NULL until the connection is ready; call again.
   * connectorId (the connector's rank and channel, chosen by Weft) reaches the acceptor. */
  weftResult_t (*connect)(void* ctx, const void* handle, uint64_t jobToken, uint64_t connectorId, void** sendComm);
  /* Non-blocking: returns weftSuccess with *recvComm == NULL while no connection is ready. */
  weftResult_t (*accept)(void* listenComm, void** recvComm, uint64_t* connectorId);
  /* Registration of memory for zero-copy; may set *mhandle = NULL when not needed. */
  weftResult_t (*regMem)(void* comm, void* data, size_t size, void** mhandle);
  weftResult_t (*deregMem)(void* comm, void* mhandle);
  /* Starts a transfer; *request stays valid until test() reports it done. tag is carried with the message
   * and checked by the receiver; a message longer than the receive buffer is an error, never an overflow. */
  weftResult_t (*isend)(void* sendComm, const void* data, size_t size, uint32_t tag, void* mhandle,
                        void** request);
  weftResult_t (*irecv)(void* recvComm, void* data, size_t size, uint32_t tag, void* mhandle, void** request);
  /* Progresses and tests one request; on done, *size is the bytes transferred and the request is freed. */
  weftResult_t (*test)(void* request, int* done, size_t* size);
  /* Blocks up to timeoutUs until some connection of this context may progress (0: just poll). Lets a
   * waiting rank give its core away instead of spinning. */
  weftResult_t (*waitReady)(void* ctx, int timeoutUs);
  weftResult_t (*closeSend)(void* sendComm);
  weftResult_t (*closeRecv)(void* recvComm);
  weftResult_t (*closeListen)(void* listenComm);
} weftTransportOps_v1;

/*
 * Optional extension of a transport: messages gathered from, or scattered into, several buffers, so that
 * Weft can run a fused collective (docs/fusion.md) on the calls' own buffers instead of packing them into
 * one. On the wire a vectored message is one message of the buffers' concatenation, so either side may use
 * it without the other. A plugin offers it by exporting WEFT_TRANSPORT_VEC_SYMBOL_V1 next to its plugin
 * table; Weft looks it up after loading the plugin and otherwise packs through a buffer of its own.
 */
#define WEFT_TRANSPORT_VEC_SYMBOL_V1 "weftTransportVec_v1"
typedef struct {
  void* data;
  size_t size;
} weftTransportIov_v1;

typedef struct {
  unsigned int abiVersion; /* must be 1 for this struct */
  /* isend and irecv (no memory registration) on the concatenation of iov[0], ..., iov[count - 1], count >= 1;
   * entries may have size 0. The array, like the buffers, stays owned by the caller, who keeps it valid and
   * unchanged until test() reports the request done. A receive fills the buffers in order; test()'s size is
   * the message's length, which may not exceed the sum of the sizes. */
  weftResult_t (*isendv)(void* sendComm, const weftTransportIov_v1* iov, int count, uint32_t tag, void** request);
  weftResult_t (*irecvv)(void* recvComm, const weftTransportIov_v1* iov, int count, uint32_t tag, void** request);
} weftTransportVecOps_v1;

/*
 * Optional extension of a transport: one wire for both directions between two ranks. Connections are one-way
 * in the ABI, but a wire may carry both ways (a TCP socket does), and one wire for a pair of connections
 * saves the packets that only acknowledge (over loopback TCP, an 8-byte exchange both ways: 5.1 us on one
 * socket, 6.9 us on two). Weft calls connectPaired instead of connect when the plugin exports
 * WEFT_TRANSPORT_PAIR_SYMBOL_V1: listenComm is the caller's own listener, the one whose handle it gave the
 * peer, and pairKey names the connections that may share a wire (the same value on both ranks: Weft passes
 * the channel). Whether they do is the transport's business; everything else behaves as with connect.
 */
#define WEFT_TRANSPORT_PAIR_SYMBOL_V1 "weftTransportPair_v1"
typedef struct {
  unsigned int abiVersion; /* must be 1 for this struct */
  /* connect's contract (non-blocking; *sendComm NULL until ready), with the two arguments above. */
  weftResult_t (*connectPaired)(void* ctx, const void* handle, uint64_t jobToken, uint64_t connectorId,
                                void* listenComm, uint64_t pairKey, void** sendComm);
} weftTransportPairOps_v1;

/*
 * Backends run whole collectives of a communicator themselves: mpi and nccl for every collective, and a
 * transport may offer them too for the cases it can do better than message passing (shm: all ranks on one
 * host, reducing straight out of each other's memory). Weft keeps everything else: argument checks, issue
 * order, groups and streams, weftAvg's division, and its own algorithms for what a backend declines.
 *
 * A communicator's backend state is set up collectively at its first collective: every rank calls
 * commPrepare, Weft gathers every rank's address, every rank calls commConnect, and Weft checks that all
 * succeeded. If any rank fails either step (or has no such plugin), every rank destroys its state and the
 * communicator runs without the backend.
 */
#define WEFT_BACKEND_ADDRESS_BYTES 128

/* What Weft tells a backend about one communicator. */
typedef struct {
  int rank;
  int nranks;
  double timeoutSeconds; /* WEFT_TIMEOUT: the longest a call may wait without news from a peer */
  /* Weft's vectorised kernels: dst[i] = a[i] op b[i]; dst may alias a or b exactly (not partially).
   * float16 and bfloat16 combine in float32. */
  void (*reduce)(void* dst, const void* a, const void* b, size_t count, weftDataType_t type, weftRedOp_t op);
  /* Non-zero once the communicator is aborted (weftCommAbort, maybe from another thread): a call that is
   * waiting must then return promptly (weftInvalidUsage). Cheap; call it as often as the waits allow.
   * NULL: the communicator is never aborted. */
  int (*aborted)(const void* hostComm);
  const void* hostComm;
} weftBackendComm_v1;

/* One collective, with the C ABI's conventions: count is AllGather's send count, ReduceScatter's
 * receive count and AllToAll's count per peer; in place when sendbuff == recvbuff (AllGather: sendbuff
 * is recvbuff's block of this rank; ReduceScatter: recvbuff is sendbuff's block); Broadcast reads
 * sendbuff on the root only, Reduce writes recvbuff on the root only. op is never weftAvg (Weft divides
 * afterwards). */
typedef struct {
  weftCollType_t coll;
  const void* sendbuff;
  void* recvbuff;
  size_t count;
  weftDataType_t datatype;
  weftRedOp_t op;
  int root;
} weftBackendOp_v1;

struct weftBackendOps_v1 {
  /* The local half of the setup (nothing waits on a peer): fills address (WEFT_BACKEND_ADDRESS_BYTES) with
   * what the other ranks need. */
  weftResult_t (*commPrepare)(void* ctx, const weftBackendComm_v1* info, void* address, void** bcomm);
  /* With every rank's address, in rank order (nranks * WEFT_BACKEND_ADDRESS_BYTES). */
  weftResult_t (*commConnect)(void* bcomm, const void* addresses);
  /* Frees everything; never waits on a peer. Also called after a failed prepare or connect. */
  weftResult_t (*commDestroy)(void* bcomm);
  /* 1 when the backend runs this operation, else 0. Must depend only on what is equal on every rank (the
   * collective, count, type, op, root, settings), so that every rank decides alike. */
  int (*supports)(void* bcomm, const weftBackendOp_v1* op);
  /* Runs the operation; returns when this rank's part is done. Calls on one bcomm never overlap. */
  weftResult_t (*run)(void* bcomm, const weftBackendOp_v1* op);
  /* Says why the last call on bcomm failed (naming the peer where one is at fault); valid until the next
   * call on bcomm. */
  const char* (*lastError)(void* bcomm);
};
typedef struct weftBackendOps_v1 weftBackendOps_v1;

/* Optional extension of a backend: collectives on a list of buffers, so that Weft can run a fused
 * operation (docs/fusion.md) straight on the calls' buffers instead of packing them, and lists of
 * collectives (runMany). A plugin offers it by
 * exporting WEFT_BACKEND_LIST_SYMBOL_V1 next to its plugin table; Weft looks it up after loading the plugin
 * and uses it only for communicators set up by that plugin's backend. Today: AllReduce. */
#define WEFT_BACKEND_LIST_SYMBOL_V1 "weftBackendList_v1"
typedef struct {
  const void* sendbuff;
  void* recvbuff; /* == sendbuff in place; otherwise apart from every buffer of the list */
  size_t count;   /* elements */
} weftBackendBuffer_v1;

typedef struct {
  unsigned int abiVersion; /* must be 1 for this struct */
  /* 1 when runList runs op over a list of buffers: op->count is their total count, op->sendbuff and
   * op->recvbuff are NULL. Like supports, must depend only on what is equal on every rank. */
  int (*supportsList)(void* bcomm, const weftBackendOp_v1* op);
  /* The collective over the concatenation of the buffers (element i of the whole is element i - offset of
   * the buffer holding it): the same result as running op on one packed vector. numBuffers may differ
   * between ranks; the total may not. */
  weftResult_t (*runList)(void* bcomm, const weftBackendOp_v1* op, const weftBackendBuffer_v1* buffers,
                          size_t numBuffers);
  /* Runs numOps independent collectives (each supported, each with its own buffers) with exactly the
   * results of running them one by one in this order; the backend may run several in one step (a plan's
   * consecutive small calls, a fused group's small calls). Weft passes the same list on every rank. NULL:
   * not offered. */
  weftResult_t (*runMany)(void* bcomm, const weftBackendOp_v1* ops, size_t numOps);
} weftBackendListOps_v1;

/* Optional extension of a backend: where it runs an operation fastest, so that Weft need not guess from
 * constants measured on other hosts. A plugin offers it by exporting WEFT_BACKEND_ADVICE_SYMBOL_V1 next to
 * its plugin table (with the memory extension below). */
#define WEFT_BACKEND_ADVICE_SYMBOL_V1 "weftBackendAdvice_v1"
typedef struct {
  unsigned int abiVersion; /* must be 1 for this struct */
  /* 1 when op runs faster on buffers of the plugin's memory (weftMemoryOps_v1) than on other memory, by
   * enough that Weft should copy other buffers into its own memory of that kind and run op there; 0 when
   * the backend is about as fast on any memory. Like supports, must depend only on what is equal on every
   * rank; the answer may change once, at the communicator's first run (where a backend may measure).
   * Without the extension Weft assumes 1 wherever the plugin offers memory. */
  int (*prefersPluginMemory)(void* bcomm, const weftBackendOp_v1* op);
} weftBackendAdviceOps_v1;

/* Optional extension of a backend: an in-place call run from a copy of its input, which Weft makes where
 * the backend prefers its plugin's memory (weftBackendAdviceOps_v1; core/collectives/bounce.cpp): the peers
 * read the copy, and the backend leaves this rank's part of the output, which already holds the input, as it
 * is. Without the extension Weft runs such a call out of place from the copy (run), and the backend copies
 * that part back over itself. A plugin offers it by exporting WEFT_BACKEND_COPIED_INPUT_SYMBOL_V1 next to its
 * plugin table. Today: AllGather. */
#define WEFT_BACKEND_COPIED_INPUT_SYMBOL_V1 "weftBackendCopiedInput_v1"
typedef struct {
  unsigned int abiVersion; /* must be 1 for this struct */
  /* Runs op, which supports accepts, with op->sendbuff a copy (apart from op->recvbuff) of what op->recvbuff's
   * part of this rank already holds (AllGather: its block): the same result as run, without writing that
   * part. A rank may run a call this way while its peers run the same call with run. */
  weftResult_t (*runFromCopy)(void* bcomm, const weftBackendOp_v1* op);
} weftBackendCopiedInputOps_v1;

/* Optional extension of a plugin: memory that its peers on this host can reach directly (weftMemAlloc).
 * A plugin offers it by exporting WEFT_MEMORY_SYMBOL_V1 next to its plugin table; weftMemAlloc uses the first
 * loaded plugin that does, and weftMemFree hands a buffer back to the plugin that made it. */
#define WEFT_MEMORY_SYMBOL_V1 "weftMemory_v1"
typedef struct {
  unsigned int abiVersion; /* must be 1 for this struct */
  /* size > 0 bytes, page aligned and zeroed, into *ptr. On failure a sentence saying why goes into
   * message (messageBytes long, always terminated). ctx is the plugin's, from init. */
  weftResult_t (*alloc)(void* ctx, size_t size, void** ptr, char* message, size_t messageBytes);
  /* ptr came from alloc. Like alloc on failure. */
  weftResult_t (*free)(void* ctx, void* ptr, char* message, size_t messageBytes);
} weftMemoryOps_v1;

typedef struct {
  unsigned int abiVersion; /* must be 1 for this struct */
  const char* name;
  weftPluginKind_t kind;
  /* Called once per process. May fail (no device, no library): the plugin is then not used. A message
   * saying why goes through host->log. */
  weftResult_t (*init)(const weftPluginHost_v1* host, void** ctx);
  weftResult_t (*finalize)(void* ctx);
  weftResult_t (*getProperties)(void* ctx, weftTransportProps_v1* props);
  const weftTransportOps_v1* transport; /* kind == weftPluginTransport */
  const weftBackendOps_v1* backend;     /* kind == weftPluginBackend; a transport may offer one too (or NULL) */
} weftPlugin_v1_t;

#ifdef __cplusplus
}
#endif

#endif /* WEFT_PLUGIN_H */
