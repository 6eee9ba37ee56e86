/* One rank of the peer-death test (run_peer_death.py starts three without mpirun, through
 * weftCommInitFromEnv, and kills one with SIGKILL while all of them are in a loop of collectives).
 *
 * A survivor loops AllReduces of 64 B, 64 KiB and 4 MiB (the node backend's inline, staged and direct
 * paths) until one fails. It prints "ERROR <code> <message>" and exits 0 when the failure is
 * weftRemoteError and weftCommAbort returns, 3 otherwise; the driver checks whom the message names.
 * The victim prints READY after the first iterations, so the driver kills it mid-loop.
 *
 * With PEER_DEATH_PLAN=1 the loop launches a plan of those three AllReduces twice each, on separate buffers,
 * instead (with WEFT_STREAM_CAPACITY=1 and WEFT_SUBGRAPH_REUSE=0 from the driver: six streams running at
 * once), so that the death also ends a launch whose streams wait on the dead rank together.
 *
 * With PEER_DEATH_SENDRECV=1 each iteration is a group of a Send to the next rank and a Recv from the previous
 * one (a ring, the sizes in turn) instead: after the first, such groups take Send/Recv's short path. */
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
  enum { kBuffers = 6 };
  float* send[kBuffers];
  float* recv[kBuffers];
  for (int b = 0; b < kBuffers; ++b) {
    send[b] = calloc(counts[2], sizeof(float));
    recv[b] = calloc(counts[2], sizeof(float));
    if (send[b] == NULL || recv[b] == NULL) return 2;
  }
  weftPlan_t plan = NULL;
  const char* usePlan = getenv("PEER_DEATH_PLAN");
  if (usePlan != NULL && usePlan[0] == '1') {
    r = weftPlanBegin(comm);
    for (int b = 0; b < kBuffers && r == weftSuccess; ++b)
      r = weftAllReduce(send[b], recv[b], counts[b % 3], weftFloat32, weftSum, comm, NULL);
    if (r == weftSuccess) r = weftPlanEnd(comm, &plan);
    if (r != weftSuccess) {
      fprintf(stderr, "plan: %s: %s\n", weftGetErrorString(r), weftGetLastErrorMessage());
      return 2;
    }
  }
  const char* useSendRecv = getenv("PEER_DEATH_SENDRECV");
  const int ring = useSendRecv != NULL && useSendRecv[0] == '1';
  int nranks = 1;
  weftCommCount(comm, &nranks);
  for (long i = 0;; ++i) {
    if (ring) {
      r = weftGroupStart();
      weftResult_t sent = weftSend(send[0], counts[i % 3], weftFloat32, (rank + 1) % nranks, comm, NULL);
      weftResult_t received =
          weftRecv(recv[0], counts[i % 3], weftFloat32, (rank + nranks - 1) % nranks, comm, NULL);
      weftResult_t ended = weftGroupEnd();
      r = r != weftSuccess ? r : sent != weftSuccess ? sent : received != weftSuccess ? received : ended;
    } else {
      r = plan != NULL ? weftPlanLaunch(plan, NULL)
                       : weftAllReduce(send[0], recv[0], counts[i % 3], weftFloat32, weftSum, comm, NULL);
    }
    if (r != weftSuccess) break;
    if (i == 30) {
      printf("READY %d\n", rank);
      fflush(stdout);
    }
  }
  printf("ERROR %s %s\n", weftGetErrorString(r), weftGetLastErrorMessage());
  fflush(stdout);
  if (plan != NULL) weftPlanDestroy(plan);
  weftResult_t aborted = weftCommAbort(comm);
  for (int b = 0; b < kBuffers; ++b) {
    free(send[b]);
    free(recv[b]);
  }
  return r == weftRemoteError && aborted == weftSuccess ? 0 : 3;
}
