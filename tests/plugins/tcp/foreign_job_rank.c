/* One rank of the foreign-client test (run_foreign_client.py starts two over tcp, without mpirun): it
 * loops AllReduces while a stranger connects to its listeners, checks every result against the value all
 * ranks' inputs sum to, and prints "OK <iterations>" (exit 0) or what went wrong (exit 1). It prints
 * "READY" once the communicator exists, so the driver knows its listeners are up, and stops once the file
 * $FOREIGN_STOP_FILE exists on some rank (agreed on by an AllReduce, so all ranks stop at the same
 * iteration). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "weft/weft.h"

int main(void) {
  weftComm_t comm = NULL;
  weftResult_t r = weftCommInitFromEnv(&comm);
  if (r != weftSuccess) {
    printf("init failed: %s: %s\n", weftGetErrorString(r), weftGetLastErrorMessage());
    return 1;
  }
  int rank = -1, nranks = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  printf("READY %d\n", rank);
  fflush(stdout);
  enum { kCount = 4096 };
  static double send[kCount], recv[kCount];
  const double expected = nranks * (nranks + 1) / 2.0; /* ranks contribute 1, 2, ... */
  const char* stopFile = getenv("FOREIGN_STOP_FILE");
  long iterations = 0;
  for (int32_t stop = 0; !stop; ++iterations) {
    for (int i = 0; i < kCount; ++i) send[i] = rank + 1;
    r = weftAllReduce(send, recv, kCount, weftFloat64, weftSum, comm, NULL);
    if (r != weftSuccess) {
      printf("AllReduce %ld failed: %s: %s\n", iterations, weftGetErrorString(r), weftGetLastErrorMessage());
      return 1;
    }
    for (int i = 0; i < kCount; ++i) {
      if (recv[i] != expected) {
        printf("AllReduce %ld: element %d is %g, expected %g\n", iterations, i, recv[i], expected);
        return 1;
      }
    }
    stop = stopFile != NULL && access(stopFile, F_OK) == 0;
    r = weftAllReduce(&stop, &stop, 1, weftInt32, weftMax, comm, NULL);
    if (r != weftSuccess) {
      printf("stop flag %ld failed: %s: %s\n", iterations, weftGetErrorString(r), weftGetLastErrorMessage());
      return 1;
    }
  }
  weftCommDestroy(comm);
  printf("OK %ld\n", iterations);
  return 0;
}
