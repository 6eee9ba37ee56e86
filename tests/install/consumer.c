/* A program written only against the installed weft.h (C99), started by mpirun without MPI in the code:
 * ranks find each other through weftCommInitFromEnv (OMPI_COMM_WORLD_RANK/SIZE and WEFT_ROOT). It checks
 * every collective, type and op against a reference computed here, and exits non-zero on any mismatch. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft/weft.h>

#define COUNT 1000
static int rank_, nranks_, failures_;

#define CHECK(call)                                                                         \
  do {                                                                                      \
    weftResult_t r_ = (call);                                                               \
    if (r_ != weftSuccess) {                                                                \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank_, #call, weftGetErrorString(r_), \
              weftGetLastErrorMessage());                                                   \
      exit(2);                                                                              \
    }                                                                                       \
  } while (0)

/* Inputs are small integers, so every type holds them and sums and products of up to 5 are exact in
 * every type (integer products may wrap, which the reference reproduces). */
static int64_t input(int rank, size_t i, weftDataType_t t) {
  int64_t v = (int64_t)((rank * 7 + i * 3) % 7);
  return (t == weftUint8 || t == weftUint32 || t == weftUint64) ? v : v - 3;
}

static uint16_t toHalf(double v, int bf) {
  float f = (float)v;
  uint32_t b;
  memcpy(&b, &f, 4);
  if (bf) return (uint16_t)((b + 0x7fff + ((b >> 16) & 1)) >> 16);
  /* small integers only: exact conversion */
  if (f == 0) return (uint16_t)((b >> 16) & 0x8000);
  uint32_t sign = (b >> 16) & 0x8000, exp = ((b >> 23) & 0xff) - 127 + 15, man = (b >> 13) & 0x3ff;
  return (uint16_t)(sign | (exp << 10) | man);
}

static double fromHalf(uint16_t h, int bf) {
  if (bf) {
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
  }
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v = exp == 0 ? ldexp(man, -24) : ldexp(man + 1024, exp - 25);
  return (h & 0x8000) ? -v : v;
}

static size_t typeSize(weftDataType_t t) {
  size_t s = 0;
  CHECK(weftDataTypeSize(t, &s));
  return s;
}

static void put(void* buf, size_t i, weftDataType_t t, double v) {
  switch (t) {
    case weftInt8:
      ((int8_t*)buf)[i] = (int8_t)(int64_t)v;
      break;
    case weftUint8:
      ((uint8_t*)buf)[i] = (uint8_t)(int64_t)v;
      break;
    case weftInt32:
      ((int32_t*)buf)[i] = (int32_t)(int64_t)v;
      break;
    case weftUint32:
      ((uint32_t*)buf)[i] = (uint32_t)(int64_t)v;
      break;
    case weftInt64:
      ((int64_t*)buf)[i] = (int64_t)v;
      break;
    case weftUint64:
      ((uint64_t*)buf)[i] = (uint64_t)(int64_t)v;
      break;
    case weftFloat16:
      ((uint16_t*)buf)[i] = toHalf(v, 0);
      break;
    case weftBfloat16:
      ((uint16_t*)buf)[i] = toHalf(v, 1);
      break;
    case weftFloat32:
      ((float*)buf)[i] = (float)v;
      break;
    case weftFloat64:
      ((double*)buf)[i] = v;
      break;
  }
}

static double get(const void* buf, size_t i, weftDataType_t t) {
  switch (t) {
    case weftInt8:
      return ((const int8_t*)buf)[i];
    case weftUint8:
      return ((const uint8_t*)buf)[i];
    case weftInt32:
      return ((const int32_t*)buf)[i];
    case weftUint32:
      return ((const uint32_t*)buf)[i];
    case weftInt64:
      return (double)((const int64_t*)buf)[i];
    case weftUint64:
      return (double)((const uint64_t*)buf)[i];
    case weftFloat16:
      return fromHalf(((const uint16_t*)buf)[i], 0);
    case weftBfloat16:
      return fromHalf(((const uint16_t*)buf)[i], 1);
    case weftFloat32:
      return ((const float*)buf)[i];
    case weftFloat64:
      return ((const double*)buf)[i];
  }
  return 0;
}

static int isInteger(weftDataType_t t) { return t <= weftUint64; }

/* The reduction of element i over ranks [0, nranks), wrapped to the type like C does. */
static double reference(size_t i, weftDataType_t t, weftRedOp_t op) {
  int64_t acc = input(0, i, t);
  for (int r = 1; r < nranks_; ++r) {
    int64_t v = input(r, i, t);
    if (op == weftSum || op == weftAvg) acc += v;
    if (op == weftProd) acc *= v;
    if (op == weftMax && v > acc) acc = v;
    if (op == weftMin && v < acc) acc = v;
  }
  char wrapped[8];
  put(wrapped, 0, t, (double)acc);
  double exact = get(wrapped, 0, t); /* integers wrap; float values here are exact */
  if (op != weftAvg) return exact;
  if (isInteger(t)) return (double)((int64_t)exact / nranks_);
  return (double)acc / nranks_;
}

static void expect(const char* what, const void* buf, size_t i, weftDataType_t t, double want) {
  double got = get(buf, i, t);
  double tol = isInteger(t) ? 0 : (t == weftFloat16 ? 4e-3 : t == weftBfloat16 ? 3e-2 : 1e-6) * (fabs(want) + 1);
  if (fabs(got - want) > tol) {
    if (failures_ < 10)
      fprintf(stderr, "rank %d: %s type %d element %zu: got %g want %g\n", rank_, what, t, i, got, want);
    ++failures_;
  }
}

static void testType(weftComm_t comm, weftDataType_t t) {
  size_t es = typeSize(t), n = (size_t)nranks_;
  char* send = malloc(COUNT * n * es);
  char* recv = malloc(COUNT * n * es);
  for (int op = weftSum; op <= weftAvg; ++op) {
    for (size_t i = 0; i < COUNT; ++i) put(send, i, t, (double)input(rank_, i, t));
    CHECK(weftAllReduce(send, recv, COUNT, t, (weftRedOp_t)op, comm, NULL));
    for (size_t i = 0; i < COUNT; ++i) expect("allreduce", recv, i, t, reference(i, t, (weftRedOp_t)op));
    int root = nranks_ - 1;
    CHECK(weftReduce(send, rank_ == root ? recv : NULL, COUNT, t, (weftRedOp_t)op, root, comm, NULL));
    if (rank_ == root)
      for (size_t i = 0; i < COUNT; ++i) expect("reduce", recv, i, t, reference(i, t, (weftRedOp_t)op));
    /* ReduceScatter: block b of every rank's input holds elements b*COUNT ... */
    for (size_t i = 0; i < COUNT * n; ++i) put(send, i, t, (double)input(rank_, i, t));
    CHECK(weftReduceScatter(send, recv, COUNT, t, (weftRedOp_t)op, comm, NULL));
    for (size_t i = 0; i < COUNT; ++i)
      expect("reducescatter", recv, i, t, reference(rank_ * COUNT + i, t, (weftRedOp_t)op));
  }
  for (size_t i = 0; i < COUNT; ++i) put(send, i, t, (double)input(rank_, i, t));
  CHECK(weftAllGather(send, recv, COUNT, t, comm, NULL));
  for (size_t b = 0; b < n; ++b)
    for (size_t i = 0; i < COUNT; ++i) expect("allgather", recv, b * COUNT + i, t, (double)input((int)b, i, t));
  CHECK(weftBroadcast(rank_ == 0 ? send : NULL, recv, COUNT, t, 0, comm, NULL));
  for (size_t i = 0; i < COUNT; ++i) expect("broadcast", recv, i, t, (double)input(0, i, t));
  /* AllToAll: rank r's block for peer p holds input(r, p*COUNT + i). */
  for (size_t i = 0; i < COUNT * n; ++i) put(send, i, t, (double)input(rank_, i, t));
  CHECK(weftAllToAll(send, recv, COUNT, t, comm, NULL));
  for (size_t b = 0; b < n; ++b)
    for (size_t i = 0; i < COUNT; ++i)
      expect("alltoall", recv, b * COUNT + i, t, (double)input((int)b, rank_ * COUNT + i, t));
  free(send);
  free(recv);
}

int main(void) {
  weftComm_t comm;
  CHECK(weftCommInitFromEnv(&comm));
  CHECK(weftCommUserRank(comm, &rank_));
  CHECK(weftCommCount(comm, &nranks_));
  for (int t = weftInt8; t <= weftFloat64; ++t) testType(comm, (weftDataType_t)t);
  CHECK(weftBarrier(comm, NULL));
  CHECK(weftCommDestroy(comm));
  if (rank_ == 0) printf("consumer: %d ranks, %s\n", nranks_, failures_ ? "FAILED" : "all collectives correct");
  return failures_ ? 1 : 0;
}
