/* fused_in_place: CALLS AllReduces of BYTES each (float sum) on heap buffers allocated one by one, issued as
 * one group (fused by the default settings) through Weft's public C API; in place ("ip": each call's output
 * is its input, as gradient AllReduces are) or not ("oop"). Before each of 45 groups (5 untimed) every
 * rank rewrites a float in every cache line of its inputs, as a backward pass would; prints the median and
 * fastest group (the slowest rank's time) on rank 0.
 *
 * Built with commperf (build/bin/fused_in_place), run by hand, e.g.
 *   mpirun -np 2 build/bin/fused_in_place ip 1000 16384
 * Results: perf/README.md, "A sixth box" (fused results of calls in place kept in cache). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft/weft.h>

enum { kUntimed = 5, kTimed = 40, kLineFloats = 16 };

static double nowUs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int byValue(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc != 4 || (strcmp(argv[1], "ip") != 0 && strcmp(argv[1], "oop") != 0) || atoi(argv[2]) <= 0 ||
      atoi(argv[3]) < 4) {
    if (rank == 0) fprintf(stderr, "usage: fused_in_place ip|oop CALLS BYTES\n");
    MPI_Finalize();
    return 2;
  }
  const int inPlace = strcmp(argv[1], "ip") == 0;
  const int calls = atoi(argv[2]);
  const size_t count = (size_t)atoi(argv[3]) / sizeof(float);
  weftUniqueId id;
  if (rank == 0 && weftGetUniqueId(&id) != weftSuccess) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  weftComm_t comm = NULL;
  if (weftCommInitRank(&comm, nranks, id, rank) != weftSuccess) MPI_Abort(MPI_COMM_WORLD, 1);
  float** send = malloc((size_t)calls * sizeof *send);
  float** recv = malloc((size_t)calls * sizeof *recv);
  for (int i = 0; i < calls; ++i) {
    send[i] = malloc(count * sizeof(float));
    recv[i] = inPlace ? send[i] : malloc(count * sizeof(float));
    for (size_t j = 0; j < count; ++j) send[i][j] = 1.0f;
  }
  double times[kTimed];
  for (int group = -kUntimed; group < kTimed; ++group) {
    for (int i = 0; i < calls; ++i) {
      for (size_t j = 0; j < count; j += kLineFloats) send[i][j] = 1.0f;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = nowUs();
    weftResult_t result = weftGroupStart();
    for (int i = 0; i < calls && result == weftSuccess; ++i) {
      result = weftAllReduce(send[i], recv[i], count, weftFloat32, weftSum, comm, NULL);
    }
    if (weftGroupEnd() != weftSuccess || result != weftSuccess) {
      fprintf(stderr, "rank %d: %s\n", rank, weftGetLastErrorMessage());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const double took = nowUs() - start;
    double slowest = 0;
    MPI_Allreduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (group >= 0) times[group] = slowest;
  }
  qsort(times, kTimed, sizeof times[0], byValue);
  if (rank == 0) {
    printf("%s, %d ranks, %d x %zu B: median %.0f us, fastest %.0f\n", inPlace ? "in place" : "out of place",
           nranks, calls, count * sizeof(float), times[kTimed / 2], times[0]);
  }
  for (int i = 0; i < calls; ++i) {
    if (!inPlace) free(recv[i]);
    free(send[i]);
  }
  free(send);
  free(recv);
  weftCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
