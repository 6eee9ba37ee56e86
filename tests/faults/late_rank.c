/* One rank of the late-rank tests (run_late_rank.py starts three without mpirun). Every rank runs an
 * AllReduce of 1024 floats, checks it against the sum computed here in double precision, and prints
 * "OK <seconds waited>", or "ERROR <seconds> <result> <message>" when the call fails.
 * After a first AllReduce together, the last rank is late for the second: with the argument "late SECONDS" it
 * sleeps first (the others wait, and with WEFT_STALL_WARN set they report the stall); with "abort SECONDS" it
 * sleeps and then calls weftCommAbort instead (the others' calls must fail at once, naming it). Exit 0 when the
 * rank did what the mode asks, 3 otherwise; the driver checks the messages and the logs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "weft/weft.h"

enum { kCount = 1024 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static float input(int rank, int i) { return (float)(rank + 1) * 0.5f + (float)(i % 97); }

int main(int argc, char** argv) {
  if (argc != 3 || (strcmp(argv[1], "late") != 0 && strcmp(argv[1], "abort") != 0)) {
    fprintf(stderr, "usage: late_rank late|abort SECONDS\n");
    return 2;
  }
  int abortMode = strcmp(argv[1], "abort") == 0;
  double lateSeconds = atof(argv[2]);
  weftComm_t comm = NULL;
  weftResult_t r = weftCommInitFromEnv(&comm);
  if (r != weftSuccess) {
    fprintf(stderr, "init: %s: %s\n", weftGetErrorString(r), weftGetLastErrorMessage());
    return 2;
  }
  int rank = -1, nranks = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  int late = rank == nranks - 1;
  static float data[kCount];
  /* A first call together, so that the one that waits runs on a set-up communicator (backend included). */
  if (weftAllReduce(data, data, kCount, weftFloat32, weftSum, comm, NULL) != weftSuccess) {
    fprintf(stderr, "first AllReduce: %s\n", weftGetLastErrorMessage());
    return 2;
  }
  for (int i = 0; i < kCount; ++i) data[i] = input(rank, i);
  if (late) {
    usleep((useconds_t)(lateSeconds * 1e6));
    if (abortMode) {
      printf("ABORTED %s\n", weftGetErrorString(weftCommAbort(comm)));
      return 0;
    }
  }
  double start = now();
  r = weftAllReduce(data, data, kCount, weftFloat32, weftSum, comm, NULL);
  double waited = now() - start;
  int ok = 0;
  if (r == weftSuccess) {
    int wrong = 0;
    for (int i = 0; i < kCount; ++i) {
      double expected = 0;
      for (int p = 0; p < nranks; ++p) expected += (double)input(p, i);
      if (fabs((double)data[i] - expected) > 1e-6 * fabs(expected)) ++wrong;
    }
    printf("OK %.2f wrong=%d\n", waited, wrong);
    ok = !abortMode && wrong == 0;
  } else {
    printf("ERROR %.2f %s %s\n", waited, weftGetErrorString(r), weftGetLastErrorMessage());
    ok = abortMode && r == weftRemoteError;
  }
  fflush(stdout);
  if (abortMode) {
    weftCommAbort(comm);
  } else {
    weftCommDestroy(comm);
  }
  return ok ? 0 : 3;
}
