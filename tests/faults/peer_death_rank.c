/* One rank of the peer-death test (run_peer_death.py starts three without mpirun, through
 * weftCommInitFromEnv, and kills one with SIGKILL while all of them are in a loop of collectives).
 *
 * A survivor loops AllReduces of 64 B, 64 KiB and 4 MiB (the node backend's inline, staged and direct
 * paths) until one fails. It prints "ERROR <code> <message>" and exits 0 when the failure is
 * weftRemoteError and weftCommAbort returns, 3 otherwise; the driver checks whom the message names.
 * The victim prints READY after the first iterations, so the driver kills it mid-loop. */
#include <stdio.h>
#include <stdlib.h>

#include "weft/weft.h"

int main(int argc, char** argv) {
  (void)argc;
  (void)argv;
  weftComm_t comm = NULL;
  weftResult_t r = weftCommInitFromEnv(&comm);
  if (r != weftSuccess) {
    fprintf(stderr, "init: %s: %s\n", weftGetErrorString(r), weftGetLastErrorMessage());
    return 2;
  }
  int rank = -1;
  weftCommUserRank(comm, &rank);
  const size_t counts[] = {16, 16 * 1024, 1024 * 1024};
  float* send = calloc(counts[2], sizeof(float));
  float* recv = calloc(counts[2], sizeof(float));
  if (send == NULL || recv == NULL) return 2;
  for (long i = 0;; ++i) {
    r = weftAllReduce(send, recv, counts[i % 3], weftFloat32, weftSum, comm, NULL);
    if (r != weftSuccess) break;
    if (i == 30) {
      printf("READY %d\n", rank);
      fflush(stdout);
    }
  }
  printf("ERROR %s %s\n", weftGetErrorString(r), weftGetLastErrorMessage());
  fflush(stdout);
  weftResult_t aborted = weftCommAbort(comm);
  free(send);
  free(recv);
  return r == weftRemoteError && aborted == weftSuccess ? 0 : 3;
}
