/*
 * Weft: collective communication with a C ABI.
 *
 * C99. Every call returns a weftResult_t; on failure weftGetLastErrorMessage() (thread-local) says what
 * was wrong, with which argument or peer. Signatures follow NCCL so that a port is a rename.
 */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include <stddef.h>

#if defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version: major * 10000 + minor * 100 + patch. */
#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0
#define WEFT_VERSION_CODE (WEFT_VERSION_MAJOR * 10000 + WEFT_VERSION_MINOR * 100 + WEFT_VERSION_PATCH)

#define WEFT_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[WEFT_UNIQUE_ID_BYTES];
} weftUniqueId;

typedef struct weftComm* weftComm_t;
typedef struct weftStream* weftStream_t;

typedef enum {
  weftSuccess = 0,
  weftInvalidArgument,
  weftInvalidUsage,
  weftSystemError,
  weftInternalError,
  weftRemoteError,
  weftTimeout,
  weftInProgress,
  weftPluginError,
  weftNotSupported
} weftResult_t;

typedef enum {
  weftInt8 = 0,
  weftUint8,
  weftInt32,
  weftUint32,
  weftInt64,
  weftUint64,
  weftFloat16,
  weftBfloat16,
  weftFloat32,
  weftFloat64
} weftDataType_t;
#define WEFT_NUM_DATA_TYPES 10

/* Integer sum and prod wrap like the C type (computed in unsigned arithmetic). Avg is sum / nranks; for
 * integers the wrapped sum is divided with C's truncation toward zero. Float16 and bfloat16 accumulate in
 * float32 and round to nearest even once per reduction step. */
typedef enum { weftSum = 0, weftProd, weftMax, weftMin, weftAvg } weftRedOp_t;
#define WEFT_NUM_RED_OPS 5

/* Kinds of operation: used by fusion settings, statistics and plugin backends. */
typedef enum {
  weftCollAllReduce = 0,
  weftCollAllGather,
  weftCollReduceScatter,
  weftCollAllToAll,
  weftCollBroadcast,
  weftCollReduce,
  weftCollSend,
  weftCollRecv,
  weftCollBarrier
} weftCollType_t;

#define WEFT_SPLIT_NOCOLOR (-1)

/* Versioned argument structs: `size`, `magic` and `version` are set by the initializer macros and let a
 * struct grow without breaking callers compiled against an older header. A struct whose magic is not its
 * own (uninitialized, or another struct) is rejected with weftInvalidArgument. */
#define WEFT_FUSION_CONFIG_MAGIC 0x57465546u /* "WFUF" */
#define WEFT_OP_ATTR_MAGIC 0x57465041u       /* "WFPA" */
#define WEFT_COMM_STATS_MAGIC 0x57465354u    /* "WFST" */
#define WEFT_STRUCT_VERSION 1u

/* Fusion of the operations of a group (weftGroupStart/End): see docs/fusion.md. */
typedef enum { weftFusionOff = 0, weftFusionAuto, weftFusionSize, weftFusionIndex, weftFusionId } weftFusionMode_t;
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version; /* set by the initializer */
  weftFusionMode_t mode;
  size_t thresholdBytes;   /* weftFusionSize; weftFusionAuto means 64 MiB */
  const int* splitIndices; /* weftFusionIndex (AllReduce only): ascending op indices that start a new fused op */
  int numSplitIndices;
} weftFusionConfig_t;
#define WEFT_FUSION_CONFIG_INITIALIZER \
  { sizeof(weftFusionConfig_t), WEFT_FUSION_CONFIG_MAGIC, WEFT_STRUCT_VERSION, weftFusionOff, 0, NULL, 0 }

/* Per-operation attributes of the Ex calls. fusionId 0 never fuses; a plain call carries fusion id 1. */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int fusionId;
} weftOpAttr_t;
#define WEFT_OP_ATTR_INITIALIZER { sizeof(weftOpAttr_t), WEFT_OP_ATTR_MAGIC, WEFT_STRUCT_VERSION, 1 }

/* Counters of a communicator since its creation. */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  unsigned long long opsSubmitted;        /* calls issued on the communicator */
  unsigned long long collectivesLaunched; /* operations run on the wire: a fused one counts once */
  unsigned long long bytesFused;          /* input bytes of the calls that ran inside fused operations */
} weftCommStats_t;
#define WEFT_COMM_STATS_INITIALIZER { sizeof(weftCommStats_t), WEFT_COMM_STATS_MAGIC, WEFT_STRUCT_VERSION, 0, 0, 0 }

/* Errors and version */
WEFT_API const char* weftGetErrorString(weftResult_t result);
WEFT_API const char* weftGetLastErrorMessage(void); /* thread-local, says what was wrong and where */
WEFT_API weftResult_t weftGetVersion(int* version);

/* Communicators */
WEFT_API weftResult_t weftGetUniqueId(weftUniqueId* uniqueId);
WEFT_API weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, weftUniqueId commId, int rank);
/* Reads WEFT_RANK, WEFT_SIZE (else OMPI_COMM_WORLD_RANK/SIZE) and WEFT_ROOT=host:port (rank 0 listens
 * there). WEFT_TOKEN (16 hex digits) sets the job token; without it the token is derived from WEFT_ROOT. */
WEFT_API weftResult_t weftCommInitFromEnv(weftComm_t* comm);
WEFT_API weftResult_t weftCommSplit(weftComm_t comm, int color, int key, weftComm_t* newcomm);
WEFT_API weftResult_t weftCommCount(const weftComm_t comm, int* count);
WEFT_API weftResult_t weftCommUserRank(const weftComm_t comm, int* rank);
/* Destroy: the orderly end, after every operation on comm finished. Abort: the error path; ends operations
 * blocked on comm in other threads, frees everything without waiting on a peer, and, when nothing had failed
 * on comm before, tells the other ranks ("rank N aborted the communicator") so that their waits end too. */
WEFT_API weftResult_t weftCommDestroy(weftComm_t comm);
WEFT_API weftResult_t weftCommAbort(weftComm_t comm);
WEFT_API weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError);

/* Streams: NULL means a call returns when its result is in place; a created stream is an in-order queue
 * run by a background thread. */
WEFT_API weftResult_t weftStreamCreate(weftStream_t* stream);
WEFT_API weftResult_t weftStreamSynchronize(weftStream_t stream);
WEFT_API weftResult_t weftStreamQuery(weftStream_t stream); /* weftSuccess when idle, weftInProgress otherwise */
WEFT_API weftResult_t weftStreamDestroy(weftStream_t stream);

/* Memory for collective buffers (as ncclMemAlloc): page aligned, zeroed, with its pages already in memory.
 * Ranks on one host read and write each other's weftMemAlloc buffers directly, instead of copying through
 * the kernel (process_vm_readv) as they must for other memory: large collectives on such buffers move
 * their bytes at memcpy speed. Any plugin may offer it (shm does, with a memfd per allocation, which keeps
 * one file descriptor open per buffer); without one, or with WEFT_PLUGINS naming none that does, the
 * memory is plain and everything works as on malloc'ed buffers. Free with weftMemFree, not free();
 * weftMemFree(NULL) does nothing. A buffer must outlive every collective that uses it. */
WEFT_API weftResult_t weftMemAlloc(void** ptr, size_t size);
WEFT_API weftResult_t weftMemFree(void* ptr);

/* Groups: calls between Start and End are issued together at End (Send/Recv pairs do not deadlock). */
WEFT_API weftResult_t weftGroupStart(void);
WEFT_API weftResult_t weftGroupEnd(void);

/* Collectives. Counts are elements. In place: sendbuff == recvbuff (AllReduce, Broadcast, Reduce, AllToAll),
 * sendbuff == recvbuff + rank*sendcount (AllGather), recvbuff == sendbuff + rank*recvcount
 * (ReduceScatter); buffers that share bytes in any other way are weftInvalidArgument. AllToAll's count is
 * per peer. Buffers may start at any address, not only at a multiple of the element size. */
WEFT_API weftResult_t weftAllReduce(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                    weftRedOp_t op, weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftBroadcast(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                    int root, weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftReduce(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                 weftRedOp_t op, int root, weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                    weftDataType_t datatype, weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                        weftStream_t stream);
WEFT_API weftResult_t weftAllToAll(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                   weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftSend(const void* sendbuff, size_t count, weftDataType_t datatype, int peer,
                               weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftRecv(void* recvbuff, size_t count, weftDataType_t datatype, int peer, weftComm_t comm,
                               weftStream_t stream);
WEFT_API weftResult_t weftBarrier(weftComm_t comm, weftStream_t stream);

/* Fusion (docs/fusion.md). coll: weftCollAllReduce, weftCollAllGather or weftCollReduceScatter; config
 * NULL goes back to the environment's setting (WEFT_FUSION, WEFT_FUSION_INDEX) or the default (auto).
 * The Ex calls are the plain ones with attributes; attr NULL means WEFT_OP_ATTR_INITIALIZER. */
WEFT_API weftResult_t weftCommSetFusion(weftComm_t comm, weftCollType_t coll, const weftFusionConfig_t* config);
WEFT_API weftResult_t weftCommGetStats(weftComm_t comm, weftCommStats_t* stats);
WEFT_API weftResult_t weftAllReduceEx(const void* sendbuff, void* recvbuff, size_t count, weftDataType_t datatype,
                                      weftRedOp_t op, weftComm_t comm, weftStream_t stream,
                                      const weftOpAttr_t* attr);
WEFT_API weftResult_t weftAllGatherEx(const void* sendbuff, void* recvbuff, size_t sendcount,
                                      weftDataType_t datatype, weftComm_t comm, weftStream_t stream,
                                      const weftOpAttr_t* attr);
WEFT_API weftResult_t weftReduceScatterEx(const void* sendbuff, void* recvbuff, size_t recvcount,
                                          weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                          weftStream_t stream, const weftOpAttr_t* attr);

/* Plans (docs/plans.md): the calls issued on a communicator between weftPlanBegin and weftPlanEnd are
 * recorded, not run; weftPlanLaunch runs them in order, on the buffers' current contents, as often as
 * wanted, with the results of issuing them eagerly. */
typedef struct weftPlan* weftPlan_t;
#define WEFT_PLAN_INFO_MAGIC 0x57465049u /* "WFPI" */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int numOps;              /* collectives recorded */
  int numSubgraphs;        /* distinct compiled units that are reused by more than one op */
  int opsReused;           /* ops served by a reused subgraph */
  int streamsWithoutReuse; /* ceil(numOps / stream capacity) */
  int streamsUsed;         /* after reuse: one per reused subgraph + ceil(other ops / capacity) */
  size_t resourceBytes;    /* scratch and staging memory the plan holds */
} weftPlanInfo_t;
#define WEFT_PLAN_INFO_INITIALIZER { sizeof(weftPlanInfo_t), WEFT_PLAN_INFO_MAGIC, WEFT_STRUCT_VERSION, 0, 0, 0, 0, 0, 0 }
WEFT_API weftResult_t weftPlanBegin(weftComm_t comm);                 /* calls on comm are recorded, not run */
WEFT_API weftResult_t weftPlanEnd(weftComm_t comm, weftPlan_t* plan); /* compiles the plan */
WEFT_API weftResult_t weftPlanLaunch(weftPlan_t plan, weftStream_t stream); /* runs it on the buffers it recorded */
WEFT_API weftResult_t weftPlanGetInfo(weftPlan_t plan, weftPlanInfo_t* info);
WEFT_API weftResult_t weftPlanDestroy(weftPlan_t plan);

/* Helpers beyond NCCL's set. */
WEFT_API weftResult_t weftDataTypeSize(weftDataType_t datatype, size_t* bytes);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_WEFT_H */
