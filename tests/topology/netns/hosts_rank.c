/* One rank of the two-host job that tests/topology/netns/run_netns.py starts in network namespaces, joined
 * by weftCommInitFromEnv (WEFT_RANK, WEFT_SIZE, WEFT_ROOT, WEFT_HOST_ID per namespace). A C99 client of the
 * public ABI, as a user's program would be.
 *
 *   hosts_rank check IFACE COUNT   AllReduce results against a sequential reference in double (float sum,
 *                                  int32 max, float avg; several counts, in place and not), then the bytes
 *                                  IFACE sent during one float AllReduce of COUNT elements
 *   hosts_rank bench IFACE COUNT ITERS   also times ITERS AllReduces of COUNT floats (median, max over ranks)
 *
 * Lines for the driver, from each host's first rank: "tx HOST BYTES" and (bench) "time_us RANKS US".
 * Exits 1 on a wrong element or a Weft error, naming it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

static int rank_ = 0;

static void check(weftResult_t r, const char* what) {
  if (r == weftSuccess) return;
  fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank_, what, weftGetErrorString(r), weftGetLastErrorMessage());
  exit(1);
}

/* Inputs whose float sums are exact: multiples of 1/4 below 2^10. */
static float input(int rank, size_t i) { return (float)((rank + 1) * 0.25 + (double)(i % 97) * 0.5); }

static unsigned long long txBytes(const char* iface) {
  char path[256];
  snprintf(path, sizeof path, "/sys/class/net/%s/statistics/tx_bytes", iface);
  FILE* f = fopen(path, "r");
  unsigned long long bytes = 0;
  if (f == NULL || fscanf(f, "%llu", &bytes) != 1) {
    fprintf(stderr, "rank %d: cannot read %s\n", rank_, path);
    exit(1);
  }
  fclose(f);
  return bytes;
}

static long long checkCollectives(weftComm_t comm, int nranks, size_t count) {
  long long wrong = 0;
  float* send = malloc(count * sizeof(float));
  float* recv = malloc(count * sizeof(float));
  int32_t* ints = malloc(count * sizeof(int32_t));
  if (send == NULL || recv == NULL || ints == NULL) exit(1);
  for (int inPlace = 0; inPlace < 2; ++inPlace) {
    for (int op = 0; op < 3; ++op) { /* float sum, int32 max, float avg */
      for (size_t i = 0; i < count; ++i) {
        send[i] = input(rank_, i);
        recv[i] = -1.0f;
        ints[i] = (int32_t)((i * 7919u + (size_t)rank_ * 104729u) % 100003u) - 50000;
      }
      if (op == 1) {
        check(weftAllReduce(ints, ints, count, weftInt32, weftMax, comm, NULL), "weftAllReduce int32 max");
      } else {
        float* out = inPlace ? send : recv;
        check(weftAllReduce(send, out, count, weftFloat32, op == 0 ? weftSum : weftAvg, comm, NULL),
              "weftAllReduce float");
        memcpy(recv, out, count * sizeof(float));
      }
      for (size_t i = 0; i < count; ++i) {
        if (op == 1) {
          int32_t expected = INT32_MIN;
          for (int r = 0; r < nranks; ++r) {
            int32_t v = (int32_t)((i * 7919u + (size_t)r * 104729u) % 100003u) - 50000;
            if (v > expected) expected = v;
          }
          if (ints[i] != expected && wrong++ < 5)
            fprintf(stderr, "rank %d: max [%zu] = %d, expected %d\n", rank_, i, ints[i], expected);
        } else {
          double expected = 0;
          for (int r = 0; r < nranks; ++r) expected += input(r, i);
          if (op == 2) expected /= nranks;
          if ((double)recv[i] != (double)(float)expected && wrong++ < 5)
            fprintf(stderr, "rank %d: %s [%zu] = %g, expected %g\n", rank_, op ? "avg" : "sum", i, recv[i],
                    expected);
        }
      }
    }
  }
  free(send);
  free(recv);
  free(ints);
  return wrong;
}

static int compareDoubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double nowUs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char** argv) {
  if (argc < 4 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "bench") != 0)) {
    fprintf(stderr, "usage: %s check|bench IFACE COUNT [ITERS]\n", argv[0]);
    return 2;
  }
  const int bench = strcmp(argv[1], "bench") == 0;
  const char* iface = argv[2];
  const size_t count = (size_t)strtoull(argv[3], NULL, 10);
  const int iters = argc > 4 ? atoi(argv[4]) : 10;
  const char* host = getenv("WEFT_HOST_ID");
  const int firstOfHost = getenv("HOSTS_RANK_FIRST_OF_HOST") != NULL;

  weftComm_t comm;
  check(weftCommInitFromEnv(&comm), "weftCommInitFromEnv");
  int nranks = 0;
  check(weftCommUserRank(comm, &rank_), "weftCommUserRank");
  check(weftCommCount(comm, &nranks), "weftCommCount");

  long long wrong = 0;
  const size_t counts[] = {1, 3, 1000, 262147, count};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) wrong += checkCollectives(comm, nranks, counts[c]);

  /* Bytes on the wire between hosts during one AllReduce: the barriers around it add a few small messages. */
  float* data = malloc(count * sizeof(float));
  if (data == NULL) return 1;
  for (size_t i = 0; i < count; ++i) data[i] = input(rank_, i);
  check(weftAllReduce(data, data, count, weftFloat32, weftSum, comm, NULL), "warm-up");
  check(weftBarrier(comm, NULL), "weftBarrier");
  const unsigned long long before = firstOfHost ? txBytes(iface) : 0;
  check(weftBarrier(comm, NULL), "weftBarrier");
  check(weftAllReduce(data, data, count, weftFloat32, weftSum, comm, NULL), "weftAllReduce (bytes)");
  check(weftBarrier(comm, NULL), "weftBarrier");
  if (firstOfHost) printf("tx %s %llu\n", host != NULL ? host : "?", txBytes(iface) - before);

  if (bench) {
    double* us = malloc((size_t)iters * sizeof(double));
    if (us == NULL) return 1;
    for (int i = 0; i < iters; ++i) {
      check(weftBarrier(comm, NULL), "weftBarrier");
      const double start = nowUs();
      check(weftAllReduce(data, data, count, weftFloat32, weftSum, comm, NULL), "weftAllReduce (timed)");
      us[i] = nowUs() - start;
    }
    qsort(us, (size_t)iters, sizeof(double), compareDoubles);
    double median = us[iters / 2];
    /* The slowest rank's median is the collective's time. */
    check(weftAllReduce(&median, &median, 1, weftFloat64, weftMax, comm, NULL), "weftAllReduce (time)");
    if (rank_ == 0) printf("time_us %d %.1f\n", nranks, median);
    free(us);
  }
  free(data);
  check(weftCommDestroy(comm), "weftCommDestroy");
  if (wrong > 0) fprintf(stderr, "rank %d: %lld wrong elements\n", rank_, wrong);
  fflush(stdout);
  return wrong > 0 ? 1 : 0;
}
