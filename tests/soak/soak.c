/* Soak (issue 8): many mixed collectives of random sizes over two communicators and a stream, every
 * result checked exactly, then resident memory, Weft's shared memory, file descriptors and threads compared
 * between the end of a warm-up and the end of the run, and /dev/shm after everything is destroyed.
 *
 * C99 against the public weft.h only. MPI is used for the unique id, for MPI_Abort on a failure (so no rank
 * is left waiting) and for gathering the summary; it never touches the data.
 *
 * Every rank draws the same sequence from one seeded PRNG, so all ranks issue the same calls. The input of
 * rank r for op k is a hash of (seed, k, r, element), so every rank can compute what every other rank sent
 * and hence the exact expected output. Inputs are chosen so that each reduction is exact in its type
 * whatever the order of the reduction steps (small integers, or integers scaled by a power of two, well
 * inside the significand), so results are compared for equality, not within a tolerance: the reference is
 * computed in uint64 (integers, wrapping like the C type) or double (floats), and Avg divides the exact sum
 * once in the type's accumulation precision (float32 for float16/bfloat16), as weft.h specifies.
 *
 * Usage: soak [--ops N] [--seed S] [--max-bytes B] [--warmup N] [--rss-bound-mib M] [--timeout S]
 *             [--verbose]
 */
#define _GNU_SOURCE 1

#include <dirent.h>
#include <malloc.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "weft/weft.h"

/* ------------------------------------------------------------------------------------------------------ */
/* Settings */

static long gOps = 10000;
static uint64_t gSeed = 0x5eedf00dULL;
static size_t gMaxBytes = (size_t)4 << 20;
static long gWarmup = 1000;
/* Resident memory may grow by at most this much between the warm-up sample (op 1,000) and the end. Every
 * buffer the test itself uses (one arena) is allocated and touched before the first collective, and the
 * warm-up starts with a sweep that brings Weft's kept buffers (per-communicator scratch and fusion
 * buffers, connections, stream threads) to about their final size (runPrologue). What still moves is
 * bounded: scratch kept at its high-water mark grows when an algorithm that uses it runs at a size between
 * the sweep's powers of two, the tuner remembers its choice per exact size (up to 4,096 sizes per
 * communicator), and malloc's free lists. Measured over 27 runs (3 seeds, np 2 to 5, shm backend, shm
 * messages, tcp, no CMA, two emulated hosts): 0 to 4.7 MiB, and 2 MiB at most after 40,000 ops at np 4
 * over tcp; the default seed at np 4 on the shm backend 6.1-6.3 MiB (7.3 after 30,000 ops). 16 MiB over
 * the 9,000 ops after the sample catches a leak of 2 KiB per op (17.6 MiB), and a leaked buffer per large
 * op (3 % of ops, 256 KiB to 4 MiB) many times over. */
static long gRssBoundMiB = 16;
static int gTimeout = 170;
static int gVerbose = 0;

/* ------------------------------------------------------------------------------------------------------ */
/* Failure reporting */

static int gWorldRank = -1;
static char gCurrent[512] = "startup";

static void onAlarm(int sig) {
  (void)sig;
  static const char prefix[] = "soak: watchdog: no progress, stuck in ";
  ssize_t ignored = write(STDERR_FILENO, prefix, sizeof prefix - 1);
  ignored = write(STDERR_FILENO, gCurrent, strnlen(gCurrent, sizeof gCurrent));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
  _exit(3);
}

static void die(const char* fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "soak: rank %d: FAIL: ", gWorldRank);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

#define CHECK(call, what)                                                          \
  do {                                                                             \
    weftResult_t r_ = (call);                                                      \
    if (r_ != weftSuccess)                                                         \
      die("%s: %s returned %s: %s", (what), #call, weftGetErrorString(r_),         \
          weftGetLastErrorMessage() ? weftGetLastErrorMessage() : "(no message)"); \
  } while (0)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------------------------------------------ */
/* PRNG (xoshiro256**, seeded by splitmix64) and the element hash */

static uint64_t splitmix(uint64_t* x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static uint64_t gState[4];

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next64(void) {
  uint64_t result = rotl(gState[1] * 5, 7) * 9;
  uint64_t t = gState[1] << 17;
  gState[2] ^= gState[0];
  gState[3] ^= gState[1];
  gState[1] ^= gState[2];
  gState[0] ^= gState[3];
  gState[2] ^= t;
  gState[3] = rotl(gState[3], 45);
  return result;
}

static uint64_t below(uint64_t n) { return n == 0 ? 0 : next64() % n; } /* bias is irrelevant here */
static double uniform(void) { return (double)(next64() >> 11) * (1.0 / 9007199254740992.0); }

/* ------------------------------------------------------------------------------------------------------ */
/* Types: sizes, float16/bfloat16 conversions (round to nearest even), names */

static const char* const kTypeNames[WEFT_NUM_DATA_TYPES] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                                            "uint64", "float16", "bfloat16", "float32", "float64"};
static const char* const kOpNames[WEFT_NUM_RED_OPS] = {"sum", "prod", "max", "min", "avg"};

static inline size_t typeSize(weftDataType_t t) {
  static const size_t sizes[WEFT_NUM_DATA_TYPES] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  return sizes[t];
}
static inline int isFloat(weftDataType_t t) { return t >= weftFloat16; }
static inline int isSigned(weftDataType_t t) { return t == weftInt8 || t == weftInt32 || t == weftInt64; }

static inline uint16_t floatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and above round to infinity */
  if (a < 0x38800000u) {                                   /* below 2^-14: a float16 subnormal */
    float af;
    memcpy(&af, &a, 4);
    return (uint16_t)(sign | (uint32_t)nearbyintf(af * 16777216.0f)); /* units of 2^-24, ties to even */
  }
  uint32_t h = ((((a >> 23) - 127 + 15) << 10) | ((a & 0x7fffffu) >> 13));
  uint32_t rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return (uint16_t)(sign | h);
}

static double halfToDouble(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? m * 0x1p-24 : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

static inline uint16_t floatToBf16(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16); /* no NaN ever reaches this */
}

static inline double bf16ToDouble(uint16_t h) {
  uint32_t b = (uint32_t)h << 16;
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* Rounds x to the type (for float16/bfloat16 through float32, as the reduction kernels store). */
static inline double roundToType(weftDataType_t t, double x) {
  switch (t) {
    case weftFloat16:
      return halfToDouble(floatToHalf((float)x));
    case weftBfloat16:
      return bf16ToDouble(floatToBf16((float)x));
    case weftFloat32:
      return (double)(float)x;
    default:
      return x;
  }
}

/* Integers travel as uint64: signed types sign-extended, unsigned ones zero-extended (canonical form). */
static inline uint64_t canonical(weftDataType_t t, uint64_t v) {
  switch (t) {
    case weftInt8:
      return (uint64_t)(int64_t)(int8_t)(uint8_t)v;
    case weftUint8:
      return v & 0xffu;
    case weftInt32:
      return (uint64_t)(int64_t)(int32_t)(uint32_t)v;
    case weftUint32:
      return v & 0xffffffffu;
    default:
      return v;
  }
}

typedef struct {
  uint64_t u; /* integers, canonical */
  double d;   /* floats */
} Val;

/* Stores v as element i of buf. */
static inline void storeVal(weftDataType_t t, void* buf, size_t i, Val v) {
  unsigned char* p = (unsigned char*)buf + i * typeSize(t);
  switch (t) {
    case weftInt8:
    case weftUint8: {
      uint8_t x = (uint8_t)v.u;
      memcpy(p, &x, 1);
      break;
    }
    case weftInt32:
    case weftUint32: {
      uint32_t x = (uint32_t)v.u;
      memcpy(p, &x, 4);
      break;
    }
    case weftInt64:
    case weftUint64:
      memcpy(p, &v.u, 8);
      break;
    case weftFloat16: {
      uint16_t x = floatToHalf((float)v.d);
      memcpy(p, &x, 2);
      break;
    }
    case weftBfloat16: {
      uint16_t x = floatToBf16((float)v.d);
      memcpy(p, &x, 2);
      break;
    }
    case weftFloat32: {
      float x = (float)v.d;
      memcpy(p, &x, 4);
      break;
    }
    case weftFloat64:
      memcpy(p, &v.d, 8);
      break;
  }
}

static inline Val loadVal(weftDataType_t t, const void* buf, size_t i) {
  const unsigned char* p = (const unsigned char*)buf + i * typeSize(t);
  Val v = {0, 0.0};
  switch (t) {
    case weftInt8:
    case weftUint8: {
      uint8_t x;
      memcpy(&x, p, 1);
      v.u = canonical(t, x);
      break;
    }
    case weftInt32:
    case weftUint32: {
      uint32_t x;
      memcpy(&x, p, 4);
      v.u = canonical(t, x);
      break;
    }
    case weftInt64:
    case weftUint64:
      memcpy(&v.u, p, 8);
      break;
    case weftFloat16: {
      uint16_t x;
      memcpy(&x, p, 2);
      v.d = halfToDouble(x);
      break;
    }
    case weftBfloat16: {
      uint16_t x;
      memcpy(&x, p, 2);
      v.d = bf16ToDouble(x);
      break;
    }
    case weftFloat32: {
      float x;
      memcpy(&x, p, 4);
      v.d = x;
      break;
    }
    case weftFloat64:
      memcpy(&v.d, p, 8);
      break;
  }
  return v;
}

/* ------------------------------------------------------------------------------------------------------ */
/* Operations */

enum { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce, kBarrier, kNumColls };
static const char* const kCollNames[kNumColls] = {"AllReduce", "AllGather", "ReduceScatter", "AllToAll",
                                                  "Broadcast", "Reduce",    "Barrier"};
enum { kBlocking, kStream }; /* where a call goes: the NULL stream or the created stream */

typedef struct {
  long index; /* op number, from 0 */
  int coll, comm, onStream, inPlace, root;
  int nullBuffer; /* a non-root Broadcast passes sendbuff NULL, a non-root Reduce recvbuff NULL */
  weftDataType_t type;
  weftRedOp_t op;
  size_t count;  /* the API's count argument */
  uint64_t salt; /* inputs of this op */
  /* Buffers, as passed to the call (send may be NULL on a non-root Broadcast, recv on a non-root Reduce). */
  unsigned char* send;
  unsigned char* recv;
  /* Regions with guards around them: a (the send side, or the only one in place) and b (the receive side). */
  unsigned char* a;
  size_t aBytes;
  unsigned char* b;
  size_t bBytes;
  uint64_t aSum;   /* checksum of the send region after filling (out of place: must not change) */
  uint8_t guard;   /* guard byte */
  uint8_t unset;   /* byte that fills receive memory not yet written */
  int expectUnset; /* the receive region must stay unwritten (non-root out-of-place Reduce) */
} Op;

enum { kGuard = 64 };

static int gRank, gSize;     /* in the op's communicator: set per op */
static int gCommRank[2];     /* this process's rank in world and split */
static int gNranks;          /* both communicators have every rank */
static weftComm_t gComms[2]; /* world, split (the same ranks, keys reversed) */
static const char* const kCommNames[2] = {"world", "split"};
static weftStream_t gStream;

/* The input value of comm rank r at element idx of its send vector. */
static inline Val inputVal(const Op* o, int r, size_t idx) {
  uint64_t h =
      mix64(o->salt ^ ((uint64_t)(r + 1) * 0xD6E8FEB86659FD93ULL) ^ ((uint64_t)idx * 0x9E3779B97F4A7C15ULL));
  Val v = {0, 0.0};
  if (!isFloat(o->type)) {
    v.u = canonical(o->type, h);
    return v;
  }
  /* Every partial result is exact for up to 8 ranks, whatever the order of the steps. Products: values in
   * [-2, 2] give 0 or a power of two (any float type); float32/64 take [-3, 3] (3^8 needs 13 bits). Sums
   * and the other ops: the ranges below. */
  if (o->op == weftProd && (o->coll == kAllReduce || o->coll == kReduce || o->coll == kReduceScatter)) {
    if (o->type == weftBfloat16 || o->type == weftFloat16) {
      v.d = (double)((int64_t)(h % 5) - 2);
    } else {
      v.d = (double)((int64_t)(h % 7) - 3);
    }
    return v;
  }
  switch (o->type) {
    case weftBfloat16: /* integers in [-32, 32]: sums of 8 within 256 */
      v.d = (double)((int64_t)(h % 65) - 32);
      break;
    case weftFloat16: /* multiples of 1/8 in [-32, 32]: sums of 8 within 2^11 eighths */
      v.d = (double)((int64_t)(h % 513) - 256) * 0x1p-3; /* scaling by a power of two is exact */
      break;
    case weftFloat32: /* multiples of 2^-10 in [-1024, 1024]: sums of 8 within 2^24 units */
      v.d = (double)((int64_t)(h % ((1u << 21) + 1)) - (1 << 20)) * 0x1p-10;
      break;
    default: /* float64: multiples of 2^-20 in [-2^20, 2^20]: sums of 8 within 2^44 units */
      v.d = (double)((int64_t)(h % ((1ULL << 41) + 1)) - (int64_t)(1ULL << 40)) * 0x1p-20;
      break;
  }
  return v;
}

static inline Val combine(weftDataType_t t, weftRedOp_t op, Val x, Val y) {
  Val v = {0, 0.0};
  if (!isFloat(t)) {
    switch (op) {
      case weftProd:
        v.u = canonical(t, x.u * y.u);
        break;
      case weftMax:
        v.u = isSigned(t) ? ((int64_t)x.u > (int64_t)y.u ? x.u : y.u) : (x.u > y.u ? x.u : y.u);
        break;
      case weftMin:
        v.u = isSigned(t) ? ((int64_t)x.u < (int64_t)y.u ? x.u : y.u) : (x.u < y.u ? x.u : y.u);
        break;
      default: /* sum, avg */
        v.u = canonical(t, x.u + y.u);
        break;
    }
    return v;
  }
  switch (op) {
    case weftProd:
      v.d = x.d * y.d;
      break;
    case weftMax:
      v.d = x.d > y.d ? x.d : y.d;
      break;
    case weftMin:
      v.d = x.d < y.d ? x.d : y.d;
      break;
    default:
      v.d = x.d + y.d;
      break;
  }
  return v;
}

/* The reduction over every comm rank of element idx of the send vectors, as the type holds it. */
static inline Val reduced(const Op* o, size_t idx) {
  Val acc = inputVal(o, 0, idx);
  for (int r = 1; r < gSize; ++r) acc = combine(o->type, o->op, acc, inputVal(o, r, idx));
  if (o->op == weftAvg) {
    if (!isFloat(o->type)) {
      acc.u = isSigned(o->type) ? (uint64_t)((int64_t)acc.u / gSize) : acc.u / (uint64_t)gSize;
    } else if (o->type == weftFloat64) {
      acc.d = acc.d / gSize;
    } else {
      float q = (float)acc.d / (float)gSize; /* the exact sum, divided once in float32 */
      acc.d = q;
    }
  }
  if (isFloat(o->type)) acc.d = roundToType(o->type, acc.d);
  return acc;
}

static inline int sameVal(weftDataType_t t, Val x, Val y) { return isFloat(t) ? x.d == y.d : x.u == y.u; }

static void valText(weftDataType_t t, Val v, char* out, size_t n) {
  if (isFloat(t)) {
    snprintf(out, n, "%.17g", v.d);
  } else if (isSigned(t)) {
    snprintf(out, n, "%lld", (long long)(int64_t)v.u);
  } else {
    snprintf(out, n, "%llu", (unsigned long long)v.u);
  }
}

static void describe(const Op* o, char* out, size_t n) {
  snprintf(out, n, "op %ld: %s comm=%s %s type=%s redop=%s count=%zu %s root=%d", o->index, kCollNames[o->coll],
           kCommNames[o->comm], o->onStream ? "stream" : "NULL-stream", kTypeNames[o->type], kOpNames[o->op],
           o->count, o->inPlace ? "in-place" : "out-of-place", o->root);
}

/* ------------------------------------------------------------------------------------------------------ */
/* The arena: one allocation, touched before the first collective, carved per step */

static unsigned char* gArena;
static size_t gArenaBytes, gArenaUsed;

/* A region of `bytes` with kGuard guard bytes on each side, its start shifted by a multiple of the element
 * size drawn from `salt` (so buffers are not always 64-byte aligned). Not from the shared PRNG: ranks carve
 * different numbers of regions. */
static unsigned char* carve(size_t bytes, size_t elem, uint8_t guard, uint64_t salt) {
  size_t shift = elem * (size_t)(mix64(salt) % (64 / elem));
  size_t start = (gArenaUsed + 63) & ~(size_t)63;
  size_t need = kGuard + shift + bytes + kGuard;
  if (start + need > gArenaBytes) die("internal: arena of %zu bytes too small", gArenaBytes);
  unsigned char* region = gArena + start + kGuard + shift;
  memset(region - kGuard, guard, kGuard);
  memset(region + bytes, guard, kGuard);
  gArenaUsed = start + need;
  return region;
}

static uint64_t checksum(const unsigned char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

/* Blocks (multiples of count) in the send and receive vectors. */
static size_t sendBlocks(int coll) { return coll == kReduceScatter || coll == kAllToAll ? (size_t)gSize : 1; }
static size_t recvBlocks(int coll) { return coll == kAllGather || coll == kAllToAll ? (size_t)gSize : 1; }

static void useComm(int comm) {
  gRank = gCommRank[comm];
  gSize = gNranks;
}

/* Draws the op's parameters (the same draws on every rank; after useComm). bytes: the size of its largest buffer
 * (nccl-tests' convention); 0 draws one, and then count is 0 once in 100 ops. like: an op whose type and
 * reduction this one takes (so that the two fuse in a group), or NULL. */
static void drawOp(Op* o, long index, int coll, int comm, int onStream, size_t bytes, const Op* like) {
  memset(o, 0, sizeof *o);
  o->index = index;
  o->coll = coll;
  o->comm = comm;
  o->onStream = onStream;
  o->salt = mix64(gSeed ^ ((uint64_t)index * 0xA0761D6478BD642FULL));
  o->type = (weftDataType_t)below(WEFT_NUM_DATA_TYPES);
  if (below(3) == 0) o->type = below(2) ? weftFloat32 : weftInt32; /* the common cases more often */
  static const weftRedOp_t ops[] = {weftSum, weftSum, weftSum, weftMax, weftMax, weftMin, weftProd, weftAvg};
  o->op = ops[below(sizeof ops / sizeof ops[0])];
  if (like != NULL) { /* drawn all the same, so that every rank draws alike */
    o->type = like->type;
    o->op = like->op;
  }
  o->inPlace = coll != kBarrier && below(5) < 2;
  o->root = (int)below((uint64_t)gNranks);
  o->nullBuffer = (int)below(2);
  const int zeroCount = below(100) == 0, drawn = bytes == 0;
  if (drawn) {
    /* Mostly small, log-uniform inside three bands: 80% 1 B - 4 KiB, 17% 4 - 256 KiB, 3% 256 KiB - max. */
    double lo, hi, u = uniform();
    double top = (double)gMaxBytes;
    if (u < 0.80) {
      lo = 1, hi = 4096;
    } else if (u < 0.97) {
      lo = 4096, hi = 262144;
    } else {
      lo = 262144, hi = top;
    }
    if (hi > top) hi = top;
    if (lo > hi) lo = hi;
    bytes = (size_t)exp(log(lo) + uniform() * (log(hi) - log(lo)));
  }
  size_t blocks = sendBlocks(coll) > recvBlocks(coll) ? sendBlocks(coll) : recvBlocks(coll);
  o->count = bytes / (typeSize(o->type) * blocks);
  if (o->count == 0) o->count = 1;
  if (drawn && zeroCount) o->count = 0; /* valid, and must write nothing */
  if (coll == kBarrier) o->count = 0;
}

/* Lays out and fills the op's buffers (after useComm). */
static void prepareOp(Op* o) {
  if (o->coll == kBarrier) return;
  const size_t e = typeSize(o->type), c = o->count;
  const size_t sendN = c * sendBlocks(o->coll), recvN = c * recvBlocks(o->coll);
  o->guard = (uint8_t)(0x5a ^ (o->salt >> 8));
  o->unset = (uint8_t)(0xc3 ^ (o->salt >> 16));
  const int root = o->root;
  if (o->inPlace) {
    size_t n = sendN > recvN ? sendN : recvN;
    o->a = carve(n * e, e, o->guard, o->salt + 1);
    o->aBytes = n * e;
    memset(o->a, o->unset, n * e);
    size_t ownAt = o->coll == kAllGather ? (size_t)gRank * c : 0; /* where this rank's input lies */
    int hasInput = !(o->coll == kBroadcast && gRank != root);
    if (hasInput) {
      for (size_t i = 0; i < sendN; ++i) storeVal(o->type, o->a + ownAt * e, i, inputVal(o, gRank, i));
    }
    o->send = o->a + ownAt * e;
    o->recv = o->a;
    if (o->coll == kReduceScatter) o->recv = o->a + (size_t)gRank * c * e;
    return;
  }
  /* Non-roots may pass NULL where the buffer is not used (weft.h). */
  const int sendNull = o->coll == kBroadcast && gRank != root && o->nullBuffer;
  const int recvNull = o->coll == kReduce && gRank != root && o->nullBuffer;
  if (!sendNull) {
    o->a = carve(sendN * e, e, o->guard, o->salt + 1);
    o->aBytes = sendN * e;
    for (size_t i = 0; i < sendN; ++i) storeVal(o->type, o->a, i, inputVal(o, gRank, i));
    o->aSum = checksum(o->a, o->aBytes);
    o->send = o->a;
  }
  if (!recvNull) {
    o->b = carve(recvN * e, e, o->guard, o->salt + 2);
    o->bBytes = recvN * e;
    memset(o->b, o->unset, recvN * e);
    o->recv = o->b;
  }
  o->expectUnset = o->coll == kReduce && gRank != root;
}

static weftResult_t issueOp(const Op* o) {
  weftComm_t comm = gComms[o->comm];
  weftStream_t s = o->onStream ? gStream : NULL;
  switch (o->coll) {
    case kAllReduce:
      return weftAllReduce(o->send, o->recv, o->count, o->type, o->op, comm, s);
    case kAllGather:
      return weftAllGather(o->send, o->recv, o->count, o->type, comm, s);
    case kReduceScatter:
      return weftReduceScatter(o->send, o->recv, o->count, o->type, o->op, comm, s);
    case kAllToAll:
      return weftAllToAll(o->send, o->recv, o->count, o->type, comm, s);
    case kBroadcast:
      return weftBroadcast(o->send, o->recv, o->count, o->type, o->root, comm, s);
    case kReduce:
      return weftReduce(o->send, o->recv, o->count, o->type, o->op, o->root, comm, s);
    default:
      return weftBarrier(comm, s);
  }
}

static void fail(const Op* o, const char* fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void fail(const Op* o, const char* fmt, ...) {
  char what[256], detail[512];
  describe(o, what, sizeof what);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  die("%s (comm rank %d of %d): %s", what, gRank, gSize, detail);
}

static void checkGuards(const Op* o, const unsigned char* region, size_t bytes, const char* name) {
  if (region == NULL) return;
  for (int i = 0; i < kGuard; ++i) {
    if (region[-kGuard + i] != o->guard)
      fail(o, "%s: byte %d before the buffer was overwritten", name, kGuard - i);
    if (region[bytes + i] != o->guard) fail(o, "%s: byte %d after the buffer was overwritten", name, i);
  }
}

/* The expected element j of the output (of the root's, for Reduce). */
static Val expectedOut(const Op* o, size_t j) {
  const size_t c = o->count;
  switch (o->coll) {
    case kAllReduce:
    case kReduce:
      return reduced(o, j);
    case kReduceScatter:
      return reduced(o, (size_t)gRank * c + j);
    case kAllGather:
      return inputVal(o, (int)(j / c), j % c);
    case kAllToAll:
      return inputVal(o, (int)(j / c), (size_t)gRank * c + j % c);
    default: /* Broadcast */
      return inputVal(o, o->root, j);
  }
}

static void checkOp(const Op* o) {
  if (o->coll == kBarrier) return;
  const size_t e = typeSize(o->type), c = o->count;
  checkGuards(o, o->a, o->aBytes, o->inPlace ? "buffer" : "sendbuff");
  checkGuards(o, o->b, o->bBytes, "recvbuff");
  if (!o->inPlace && o->a != NULL && checksum(o->a, o->aBytes) != o->aSum) {
    for (size_t i = 0; i < o->aBytes / e; ++i) {
      Val want = inputVal(o, gRank, i), got = loadVal(o->type, o->a, i);
      if (!sameVal(o->type, got, want)) fail(o, "sendbuff element %zu was changed by the call", i);
    }
    fail(o, "sendbuff was changed by the call");
  }
  if (o->expectUnset) {
    for (size_t i = 0; i < o->bBytes; ++i) {
      if (o->b[i] != o->unset) fail(o, "non-root recvbuff byte %zu was written", i);
    }
    return;
  }
  if (o->coll == kReduce && gRank != o->root) return; /* in place on a non-root: unspecified */
  /* count 0: the regions are empty and the guards say nothing was written. */
  const unsigned char* out = o->recv;
  const size_t outN = c * recvBlocks(o->coll);
  for (size_t j = 0; j < outN; ++j) {
    Val want = expectedOut(o, j), got = loadVal(o->type, out, j);
    if (!sameVal(o->type, got, want)) {
      char g[64], w[64];
      valText(o->type, got, g, sizeof g);
      valText(o->type, want, w, sizeof w);
      fail(o, "element %zu of %zu is %s, expected %s", j, outN, g, w);
    }
  }
}

/* ------------------------------------------------------------------------------------------------------ */
/* Resource samples */

typedef struct {
  long long rssKiB;
  long long shmWeftEntries, shmWeftBytes; /* /dev/shm entries with "weft" in the name */
  long long shmEntries, shmBytes;         /* all of /dev/shm (other jobs share it: reported, not checked) */
  long long memfdMaps, memfdBytes;        /* this process's mappings of Weft's memfd segments */
  long long fds, threads;
} Sample;
enum { kSampleFields = 9 };

static long long rssKiB(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  long long size = 0, resident = 0;
  if (f == NULL || fscanf(f, "%lld %lld", &size, &resident) != 2) die("cannot read /proc/self/statm");
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static long long countDir(const char* path) {
  DIR* d = opendir(path);
  if (d == NULL) return -1;
  long long n = 0;
  struct dirent* ent;
  while ((ent = readdir(d)) != NULL) n += ent->d_name[0] != '.';
  closedir(d);
  return n;
}

static Sample sample(void) {
  Sample s;
  memset(&s, 0, sizeof s);
  s.rssKiB = rssKiB();
  DIR* d = opendir("/dev/shm");
  if (d != NULL) {
    struct dirent* ent;
    while ((ent = readdir(d)) != NULL) {
      if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
      char path[512];
      struct stat st;
      snprintf(path, sizeof path, "/dev/shm/%s", ent->d_name);
      long long bytes = stat(path, &st) == 0 ? (long long)st.st_size : 0;
      ++s.shmEntries;
      s.shmBytes += bytes;
      if (strstr(ent->d_name, "weft") != NULL) {
        ++s.shmWeftEntries;
        s.shmWeftBytes += bytes;
      }
    }
    closedir(d);
  }
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps != NULL) {
    char line[1024];
    while (fgets(line, sizeof line, maps) != NULL) {
      unsigned long long lo, hi;
      if (strstr(line, "/memfd:weft") == NULL || sscanf(line, "%llx-%llx", &lo, &hi) != 2) continue;
      ++s.memfdMaps;
      s.memfdBytes += (long long)(hi - lo);
    }
    fclose(maps);
  }
  s.fds = countDir("/proc/self/fd") - 1; /* less the directory stream itself */
  s.threads = countDir("/proc/self/task");
  return s;
}

static void toArray(const Sample* s, long long* a) {
  long long v[kSampleFields] = {s->rssKiB,    s->shmWeftEntries, s->shmWeftBytes, s->shmEntries, s->shmBytes,
                                s->memfdMaps, s->memfdBytes,     s->fds,          s->threads};
  memcpy(a, v, sizeof v);
}

/* ------------------------------------------------------------------------------------------------------ */
/* Steps: one op alone, a batch on the stream, or a group */

enum { kMaxBatch = 5 };
static long gDone;
/* What ran (printed with --verbose): per collective; in place; on the stream; in groups; count 0; bytes
 * of the largest buffer. */
static long gPerColl[kNumColls], gInPlace, gOnStream, gGrouped, gZero;
static double gBytes;

static void runStep(Op* ops, int n, int grouped, int anyOnStream) {
  char what[256];
  if (grouped) CHECK(weftGroupStart(), "weftGroupStart");
  for (int i = 0; i < n; ++i) {
    describe(&ops[i], gCurrent, sizeof gCurrent);
    useComm(ops[i].comm);
    describe(&ops[i], what, sizeof what);
    CHECK(issueOp(&ops[i]), what);
  }
  if (grouped) {
    snprintf(gCurrent, sizeof gCurrent, "weftGroupEnd after op %ld", ops[n - 1].index);
    CHECK(weftGroupEnd(), gCurrent);
  }
  if (anyOnStream) {
    snprintf(gCurrent, sizeof gCurrent, "weftStreamSynchronize after op %ld", ops[n - 1].index);
    CHECK(weftStreamSynchronize(gStream), gCurrent);
    weftResult_t q = weftStreamQuery(gStream);
    if (q != weftSuccess) die("weftStreamQuery after weftStreamSynchronize returned %s", weftGetErrorString(q));
  }
  for (int i = 0; i < n; ++i) {
    useComm(ops[i].comm);
    checkOp(&ops[i]);
  }
  for (int i = 0; i < n; ++i) {
    const Op* o = &ops[i];
    ++gPerColl[o->coll];
    gInPlace += o->inPlace;
    gOnStream += o->onStream;
    gGrouped += grouped;
    gZero += o->coll != kBarrier && o->count == 0;
    gBytes += (double)(o->aBytes > o->bBytes ? o->aBytes : o->bBytes);
  }
  gDone += n;
}

/* Draws (see drawOp) and prepares an op (buffers from the arena, which the step resets). */
static void makeOp(Op* o, long index, int coll, int comm, int onStream, size_t bytes, const Op* like) {
  useComm(comm);
  drawOp(o, index, coll, comm, onStream, bytes, like);
  prepareOp(o);
}

static int drawColl(void) {
  static const int weights[kNumColls] = {30, 12, 12, 10, 14, 14, 8};
  int u = (int)below(100);
  for (int c = 0; c < kNumColls; ++c) {
    if (u < weights[c]) return c;
    u -= weights[c];
  }
  return kAllReduce;
}

/* The same with the collective and the communicator drawn (in that order). */
static void makeRandomOp(Op* o, long index, int onStream) {
  const int coll = drawColl();
  const int comm = (int)below(2);
  makeOp(o, index, coll, comm, onStream, 0, NULL);
}

/* The first 356 ops, so that every buffer Weft keeps has about its final size before the warm-up sample:
 * every collective at every power of two from 1 B to the largest size on both communicators (the tuner
 * picks algorithms by size, and some, Bruck's AllGather or the binomial Reduce, keep scratch memory per
 * communicator at its high-water mark, which only the largest size they run at reaches); then, on both
 * communicators, on the NULL stream and on the stream, every collective at the largest size alone, in
 * groups of two different ones, and in groups of two that fuse (fusion buffers reach a piece's size). */
static void runPrologue(void) {
  Op ops[kMaxBatch];
  for (int comm = 0; comm < 2; ++comm) {
    for (int coll = 0; coll < kBarrier; ++coll) {
      for (size_t bytes = 1; bytes <= gMaxBytes; bytes *= 2) {
        gArenaUsed = 0;
        makeOp(&ops[0], gDone, coll, comm, kBlocking, bytes, NULL);
        runStep(ops, 1, 0, 0);
      }
    }
  }
  for (int comm = 0; comm < 2; ++comm) {
    for (int onStream = 0; onStream < 2; ++onStream) {
      for (int coll = 0; coll < kNumColls; ++coll) {
        gArenaUsed = 0;
        makeOp(&ops[0], gDone, coll, comm, onStream, gMaxBytes, NULL);
        runStep(ops, 1, 0, onStream);
      }
      for (int coll = 0; coll < kNumColls; coll += 2) {
        gArenaUsed = 0;
        int n = coll + 1 < kNumColls ? 2 : 1;
        for (int i = 0; i < n; ++i) makeOp(&ops[i], gDone + i, coll + i, comm, onStream, gMaxBytes, NULL);
        runStep(ops, n, 1, onStream);
      }
      /* Groups that fuse (fusion buffers reach the size of a piece). */
      static const int fusing[] = {kAllReduce, kAllGather, kReduceScatter};
      for (int f = 0; f < 3; ++f) {
        gArenaUsed = 0;
        for (int i = 0; i < 2; ++i)
          makeOp(&ops[i], gDone + i, fusing[f], comm, onStream, gMaxBytes, i ? &ops[0] : NULL);
        runStep(ops, 2, 1, onStream);
      }
    }
  }
}

/* One random step: 45% one op on the NULL stream; 25% 1-4 ops queued on the stream, sometimes with one op
 * on the NULL stream issued after them before the stream is synchronized; 15% a group of 2-4 on the NULL
 * stream; 15% a group of 2-4, each op on the NULL stream or the stream. */
static void runRandomStep(void) {
  Op ops[kMaxBatch];
  gArenaUsed = 0;
  const long left = gOps - gDone;
  int kind = (int)below(100), n = 1, grouped = 0, anyOnStream = 0;
  if (kind < 45) {
    makeRandomOp(&ops[0], gDone, kBlocking);
  } else if (kind < 70) {
    n = 1 + (int)below(4);
    if (n > left) n = (int)left;
    for (int i = 0; i < n; ++i) makeRandomOp(&ops[i], gDone + i, kStream);
    if (n < left && below(3) == 0) {
      makeRandomOp(&ops[n], gDone + n, kBlocking);
      ++n;
    }
    anyOnStream = 1;
  } else {
    grouped = 1;
    n = 2 + (int)below(3);
    if (n > left) n = (int)left;
    const int mixed = kind >= 85;
    if (below(2) == 0) {
      /* A bucket: ops that fuse (same collective, communicator, stream, type and reduction). */
      static const int fusing[] = {kAllReduce, kAllReduce, kAllGather, kReduceScatter};
      const int coll = fusing[below(4)], comm = (int)below(2);
      anyOnStream = mixed ? (int)below(2) : kBlocking;
      for (int i = 0; i < n; ++i) makeOp(&ops[i], gDone + i, coll, comm, anyOnStream, 0, i ? &ops[0] : NULL);
    } else {
      for (int i = 0; i < n; ++i) {
        const int onStream = mixed ? (int)below(2) : kBlocking;
        anyOnStream |= onStream;
        makeRandomOp(&ops[i], gDone + i, onStream);
      }
    }
  }
  runStep(ops, n, grouped, anyOnStream);
}

/* ------------------------------------------------------------------------------------------------------ */

static void usage(void) {
  fprintf(stderr,
          "usage: soak [--ops N] [--seed S] [--max-bytes B] [--warmup N] [--rss-bound-mib M] [--timeout S] "
          "[--verbose]\n");
  exit(2);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gWorldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gNranks);
  for (int i = 1; i < argc; ++i) {
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--verbose") == 0) {
      gVerbose = 1;
      continue;
    }
    if (v == NULL) usage();
    if (strcmp(argv[i], "--ops") == 0) {
      gOps = atol(v);
    } else if (strcmp(argv[i], "--seed") == 0) {
      gSeed = strtoull(v, NULL, 0);
    } else if (strcmp(argv[i], "--max-bytes") == 0) {
      gMaxBytes = (size_t)strtoull(v, NULL, 0);
    } else if (strcmp(argv[i], "--warmup") == 0) {
      gWarmup = atol(v);
    } else if (strcmp(argv[i], "--rss-bound-mib") == 0) {
      gRssBoundMiB = atol(v);
    } else if (strcmp(argv[i], "--timeout") == 0) {
      gTimeout = atoi(v);
    } else {
      usage();
    }
    ++i;
  }
  if (gOps < 1 || gMaxBytes < 64 || gWarmup < 0 || gWarmup >= gOps) usage();
  if (gNranks > 8) die("at most 8 ranks: the inputs are chosen so that reductions over 8 are exact");
  signal(SIGALRM, onAlarm);
  alarm((unsigned)gTimeout);

  { /* Same sequence on every rank. */
    uint64_t x = gSeed;
    for (int i = 0; i < 4; ++i) gState[i] = splitmix(&x);
  }
  /* The arena: kMaxBatch ops of the largest size (send and receive) plus guards and shifts, touched now so
   * that it is resident before the first sample. */
  gArenaBytes = (size_t)kMaxBatch * 2 * (gMaxBytes + 4 * kGuard + 128) + 4096;
  if (posix_memalign((void**)&gArena, 4096, gArenaBytes) != 0) die("cannot allocate %zu bytes", gArenaBytes);
  memset(gArena, 0, gArenaBytes);

  const Sample atStart = sample();

  weftUniqueId id;
  memset(&id, 0, sizeof id);
  if (gWorldRank == 0) CHECK(weftGetUniqueId(&id), "weftGetUniqueId");
  MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  snprintf(gCurrent, sizeof gCurrent, "weftCommInitRank");
  CHECK(weftCommInitRank(&gComms[0], gNranks, id, gWorldRank), "weftCommInitRank");
  /* The second communicator: every rank, keys reversed, so its rank i is world rank n-1-i. */
  snprintf(gCurrent, sizeof gCurrent, "weftCommSplit");
  CHECK(weftCommSplit(gComms[0], 0, gNranks - 1 - gWorldRank, &gComms[1]), "weftCommSplit");
  for (int c = 0; c < 2; ++c) {
    int n = 0;
    CHECK(weftCommUserRank(gComms[c], &gCommRank[c]), "weftCommUserRank");
    CHECK(weftCommCount(gComms[c], &n), "weftCommCount");
    if (n != gNranks) die("%s has %d ranks, expected %d", kCommNames[c], n, gNranks);
  }
  if (gCommRank[0] != gWorldRank || gCommRank[1] != gNranks - 1 - gWorldRank) {
    die("ranks %d (world) and %d (split) for world rank %d", gCommRank[0], gCommRank[1], gWorldRank);
  }
  CHECK(weftStreamCreate(&gStream), "weftStreamCreate");

  const double t0 = now();
  runPrologue();
  Sample warm;
  long warmAt = -1;
  for (;;) {
    if (warmAt < 0 && (gDone >= gWarmup || gDone >= gOps)) { /* a short run: at the end of the prologue */
      warm = sample();
      warmAt = gDone;
    }
    if (gDone >= gOps) break;
    const long before = gDone;
    runRandomStep();
    if (gVerbose && gDone / 1000 != before / 1000) {
      /* malloc's view tells a leak (in use grows) from fragmentation (only the arena grows). */
      struct mallinfo2 mi = mallinfo2();
      fprintf(stderr,
              "soak: rank %d: %ld ops, %.1f s, rss %lld KiB, malloc in use %zu KiB, arena %zu KiB, mmap %zu KiB\n",
              gWorldRank, gDone, now() - t0, rssKiB(), mi.uordblks >> 10, mi.arena >> 10, mi.hblkhd >> 10);
    }
  }
  const double seconds = now() - t0;
  const Sample atEnd = sample();

  for (int c = 0; c < 2; ++c) {
    weftResult_t async = weftInternalError;
    CHECK(weftCommGetAsyncError(gComms[c], &async), "weftCommGetAsyncError");
    if (async != weftSuccess) die("%s reports async error %s", kCommNames[c], weftGetErrorString(async));
  }
  snprintf(gCurrent, sizeof gCurrent, "teardown");
  CHECK(weftStreamDestroy(gStream), "weftStreamDestroy");
  CHECK(weftCommDestroy(gComms[1]), "weftCommDestroy(split)");
  CHECK(weftCommDestroy(gComms[0]), "weftCommDestroy(world)");
  MPI_Barrier(MPI_COMM_WORLD); /* every rank has destroyed everything */
  const Sample atFinal = sample();
  alarm(0);

  /* Checks, on every rank. */
  char problems[1024] = "";
  size_t len = 0;
#define PROBLEM(...) \
  len += (size_t)snprintf(problems + len, len < sizeof problems ? sizeof problems - len : 0, __VA_ARGS__)
  const long long rssGrowth = atEnd.rssKiB - warm.rssKiB;
  if (rssGrowth > gRssBoundMiB * 1024) {
    PROBLEM(" RSS grew by %lld KiB from op %ld to op %ld (bound %ld MiB);", rssGrowth, warmAt, gDone,
            gRssBoundMiB);
  }
  if (atEnd.shmWeftEntries > warm.shmWeftEntries || atEnd.shmWeftBytes > warm.shmWeftBytes) {
    PROBLEM(" /dev/shm weft entries grew: %lld (%lld B) -> %lld (%lld B);", warm.shmWeftEntries, warm.shmWeftBytes,
            atEnd.shmWeftEntries, atEnd.shmWeftBytes);
  }
  if (atEnd.memfdMaps > warm.memfdMaps || atEnd.memfdBytes > warm.memfdBytes) {
    PROBLEM(" weft memfd mappings grew: %lld (%lld B) -> %lld (%lld B);", warm.memfdMaps, warm.memfdBytes,
            atEnd.memfdMaps, atEnd.memfdBytes);
  }
  if (atEnd.fds > warm.fds) PROBLEM(" open fds grew: %lld -> %lld;", warm.fds, atEnd.fds);
  if (atEnd.threads > warm.threads) PROBLEM(" threads grew: %lld -> %lld;", warm.threads, atEnd.threads);
  if (atFinal.shmWeftEntries > atStart.shmWeftEntries) {
    PROBLEM(" /dev/shm holds %lld weft entries after teardown, %lld before the first communicator;",
            atFinal.shmWeftEntries, atStart.shmWeftEntries);
  }
#undef PROBLEM
  if (len > 0) fprintf(stderr, "soak: rank %d: FAIL:%s\n", gWorldRank, problems);

  /* Summary: the largest value over the ranks of each figure. */
  long long mine[4][kSampleFields], most[4][kSampleFields];
  toArray(&atStart, mine[0]);
  toArray(&warm, mine[1]);
  toArray(&atEnd, mine[2]);
  toArray(&atFinal, mine[3]);
  MPI_Reduce(mine, most, 4 * kSampleFields, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  long long growth = rssGrowth, maxGrowth = 0;
  MPI_Reduce(&growth, &maxGrowth, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  int bad = len > 0, anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (gWorldRank == 0) {
    printf(
        "soak: %s np=%d ops=%ld seconds=%.1f seed=%#llx max_bytes=%zu | rss_kib warm(op %ld)=%lld end=%lld "
        "growth=%lld bound=%ld | shm_weft entries %lld/%lld/%lld bytes %lld/%lld/%lld (warm/end/final) | "
        "dev_shm_total entries %lld->%lld bytes %lld->%lld | memfd_weft maps %lld->%lld bytes %lld->%lld "
        "final %lld | fds %lld->%lld threads %lld->%lld\n",
        anyBad ? "FAIL" : "OK", gNranks, gDone, seconds, (unsigned long long)gSeed, gMaxBytes, warmAt, most[1][0],
        most[2][0], maxGrowth, gRssBoundMiB * 1024, most[1][1], most[2][1], most[3][1], most[1][2], most[2][2],
        most[3][2], most[1][3], most[2][3], most[1][4], most[2][4], most[1][5], most[2][5], most[1][6], most[2][6],
        most[3][5], most[1][7], most[2][7], most[1][8], most[2][8]);
    if (gVerbose) {
      printf("soak: ops per collective:");
      for (int c = 0; c < kNumColls; ++c) printf(" %s %ld", kCollNames[c], gPerColl[c]);
      printf("; in place %ld, on the stream %ld, in groups %ld, count 0 %ld; %.1f MiB moved (largest buffer)\n",
             gInPlace, gOnStream, gGrouped, gZero, gBytes / 1048576.0);
    }
    fflush(stdout);
  }
  free(gArena);
  MPI_Finalize();
  return anyBad ? 1 : 0;
}
