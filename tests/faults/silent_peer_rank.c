/* One rank of the silent-peer test (run_silent_peer.py starts two without mpirun, with WEFT_TIMEOUT set):
 * after one AllReduce together, rank 1 stops calling. Rank 0's next AllReduce must return weftTimeout
 * after WEFT_TIMEOUT seconds (not much sooner, not much later), naming rank 1; rank 0 prints
 * "TIMEOUT <seconds> <message>" and exits 0 when all of that holds, 3 otherwise.
 * With the argument "abort", rank 0 instead blocks in that AllReduce on a second thread and calls
 * weftCommAbort from the main thread: the abort must return within 2 s (long before WEFT_TIMEOUT) and the
 * AllReduce must fail; it prints "ABORT <seconds> <message>".
 * With WEFT_TEST_OP=sendrecv the call that blocks is a group of a Send to and a Recv from the peer instead (the
 * ranks exchange once together first, so that the group takes Send/Recv's short path on made connections). */
#include <pthread.h>
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

static int sendRecvMode;

/* The call rank 0 blocks in: the AllReduce, or the exchange of sendrecv mode (the send can complete, the
 * receive cannot). */
static weftResult_t blockingCall(weftComm_t comm, float* value) {
  if (!sendRecvMode) return weftAllReduce(value, value, 16, weftFloat32, weftSum, comm, NULL);
  int rank = -1;
  weftCommUserRank(comm, &rank);
  const int peer = 1 - rank;
  weftResult_t r = weftGroupStart();
  if (r != weftSuccess) return r;
  weftResult_t sent = weftSend(value, 8, weftFloat32, peer, comm, NULL);
  weftResult_t received = weftRecv(value + 8, 8, weftFloat32, peer, comm, NULL);
  r = weftGroupEnd();
  if (sent != weftSuccess) return sent;
  return received != weftSuccess ? received : r;
}

struct Blocked {
  weftComm_t comm;
  float* value;
  weftResult_t result;
};

static void* blockedAllReduce(void* arg) {
  struct Blocked* b = arg;
  b->result = blockingCall(b->comm, b->value);
  return NULL;
}

/* Rank 0's part of the abort test. */
static int abortWhileBlocked(weftComm_t comm, float* value) {
  struct Blocked blocked = {comm, value, weftSuccess};
  pthread_t thread;
  if (pthread_create(&thread, NULL, blockedAllReduce, &blocked) != 0) return 2;
  usleep(500000);
  double start = now();
  weftResult_t aborted = weftCommAbort(comm);
  double waited = now() - start;
  pthread_join(thread, NULL);
  printf("ABORT %.2f abort: %s, blocked call: %s\n", waited, weftGetErrorString(aborted),
         weftGetErrorString(blocked.result));
  return aborted == weftSuccess && blocked.result != weftSuccess && waited < 2.0 ? 0 : 3;
}

int main(int argc, char** argv) {
  int abortMode = argc > 1 && strcmp(argv[1], "abort") == 0;
  const char* op = getenv("WEFT_TEST_OP");
  sendRecvMode = op != NULL && strcmp(op, "sendrecv") == 0;
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
  if (sendRecvMode && blockingCall(comm, value) != weftSuccess) return 2;
  if (rank != 0) {
    /* Silent and alive: only the timeout (or rank 0's abort, after 0.5 s) can end rank 0's wait. */
    sleep(abortMode ? 3 : (unsigned)limit + 3);
    weftCommAbort(comm);
    return 0;
  }
  if (abortMode) return abortWhileBlocked(comm, value);
  double start = now();
  r = blockingCall(comm, value);
  double waited = now() - start;
  const char* message = weftGetLastErrorMessage();
  printf("TIMEOUT %.2f %s: %s\n", waited, weftGetErrorString(r), message);
  int ok =
      r == weftTimeout && strstr(message, "rank(s) 1") != NULL && waited >= limit - 0.5 && waited <= limit + 5;
  weftCommAbort(comm);
  return ok ? 0 : 3;
}
