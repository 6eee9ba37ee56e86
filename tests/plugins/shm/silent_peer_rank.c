/* One rank of the silent-peer test (run_silent_peer.py starts two without mpirun, with WEFT_TIMEOUT set):
 * after one AllReduce together, rank 1 stops calling. Rank 0's next AllReduce must return weftTimeout
 * after WEFT_TIMEOUT seconds (not much sooner, not much later), naming rank 1; rank 0 prints
 * "TIMEOUT <seconds> <message>" and exits 0 when all of that holds, 3 otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "weft/weft.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void) {
  const char* limitText = getenv("WEFT_TIMEOUT");
  double limit = limitText != NULL ? atof(limitText) : 0;
  weftComm_t comm = NULL;
  weftResult_t r = weftCommInitFromEnv(&comm);
  if (r != weftSuccess || limit <= 0) {
    fprintf(stderr, "init: %s: %s (WEFT_TIMEOUT must be set)\n", weftGetErrorString(r), weftGetLastErrorMessage());
    return 2;
  }
  int rank = -1;
  weftCommUserRank(comm, &rank);
  float value[16] = {0};
  if (weftAllReduce(value, value, 16, weftFloat32, weftSum, comm, NULL) != weftSuccess) return 2;
  if (rank != 0) {
    sleep((unsigned)limit + 3); /* silent, alive: only the timeout can end rank 0's wait */
    weftCommAbort(comm);
    return 0;
  }
  double start = now();
  r = weftAllReduce(value, value, 16, weftFloat32, weftSum, comm, NULL);
  double waited = now() - start;
  const char* message = weftGetLastErrorMessage();
  printf("TIMEOUT %.2f %s: %s\n", waited, weftGetErrorString(r), message);
  int ok = r == weftTimeout && strstr(message, "rank(s) 1") != NULL && waited >= limit - 0.5 && waited <= limit + 5;
  weftCommAbort(comm);
  return ok ? 0 : 3;
}
