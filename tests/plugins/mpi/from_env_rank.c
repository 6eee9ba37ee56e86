/* A rank of a job started without mpirun (run_decline.py starts it like a launcher would, through
 * weftCommInitFromEnv): with WEFT_PLUGINS=mpi,tcp the mpi plugin must decline and the job run over tcp;
 * with WEFT_PLUGINS=mpi alone, fail with a clear error rather than hang. With --mpi-init the rank first
 * initialises MPI itself, making a one-process MPI world (a singleton), which must be declined as well.
 * Prints "RESULT ok" after a correct AllReduce, "RESULT error <message>" when Weft refused.
 * Under mpirun without --mpi-init, it is also the job in which the plugin initialises MPI itself. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft/weft.h>

int main(int argc, char** argv) {
  int mpiInit = argc > 1 && strcmp(argv[1], "--mpi-init") == 0;
  if (mpiInit) MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  weftComm_t comm = NULL;
  weftResult_t r = weftCommInitFromEnv(&comm);
  if (r == weftSuccess) r = weftCommUserRank(comm, &rank);
  if (r == weftSuccess) r = weftCommCount(comm, &size);
  enum { kCount = 4096 };
  static double data[kCount];
  for (int i = 0; i < kCount; ++i) data[i] = rank * 1000.0 + i;
  if (r == weftSuccess) r = weftAllReduce(data, data, kCount, weftFloat64, weftSum, comm, NULL);
  int bad = 0;
  if (r != weftSuccess) {
    printf("RESULT error %s: %s\n", weftGetErrorString(r), weftGetLastErrorMessage());
  } else {
    for (int i = 0; i < kCount; ++i) {
      /* sum over ranks of rank*1000 + i, exact in double */
      double expected = 1000.0 * size * (size - 1) / 2 + (double)size * i;
      bad += data[i] != expected;
    }
    printf(bad ? "RESULT wrong %d elements\n" : "RESULT ok\n", bad);
  }
  fflush(stdout);
  if (comm != NULL) weftCommDestroy(comm);
  if (mpiInit) MPI_Finalize();
  return r == weftSuccess && bad == 0 ? 0 : 1;
}
