// cold_allreduce: N AllReduces on buffers that other memory traffic has pushed out of the caches, made one by
// one and then as a group with fusion off, through Weft's public C API (launch with mpirun, np 2).
//
// Before each repetition every rank writes a 64 MiB buffer of its own, as an application's other work would,
// so the calls' inputs and outputs come back from memory; prints rank 0's median and fastest repetition of 12.
// It compares the shm backend's two ways of running large AllReduces on heap buffers: run it under
// WEFT_SHM_CMA_COST=high (bounced through mapped memory) and =low (by CMA where every rank has a CPU).
//
// Built with commperf (build/bin/cold_allreduce).
// usage: mpirun -np 2 -x WEFT_SHM_CMA_COST=low build/bin/cold_allreduce CALLS KIB      e.g. 16 1024
// Results: perf/README.md, "A fifth box: 2-vCPU Xeon" (the cold-buffer cases that bound the advice).
#include <mpi.h>
#include <weft/weft.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc != 3) {
    if (rank == 0) std::fprintf(stderr, "usage: cold_allreduce CALLS KIB\n");
    MPI_Finalize();
    return 2;
  }
  weftUniqueId id;
  if (rank == 0 && weftGetUniqueId(&id) != weftSuccess) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  weftComm_t comm = nullptr;
  if (weftCommInitRank(&comm, nranks, id, rank) != weftSuccess) MPI_Abort(MPI_COMM_WORLD, 1);
  const int calls = std::atoi(argv[1]);
  const size_t count = static_cast<size_t>(std::atoi(argv[2])) * 1024 / sizeof(float);
  std::vector<std::vector<float>> send(calls, std::vector<float>(count, 1.0f));
  std::vector<std::vector<float>> recv(calls, std::vector<float>(count));
  std::vector<float> other((size_t{64} << 20) / sizeof(float), 1.0f);
  weftFusionConfig_t off = WEFT_FUSION_CONFIG_INITIALIZER;
  off.mode = weftFusionOff;
  weftCommSetFusion(comm, weftCollAllReduce, &off);
  for (bool grouped : {false, true}) {
    std::vector<double> us;
    for (int rep = 0; rep < 12; ++rep) {
      std::transform(other.begin(), other.end(), other.begin(), [](float x) { return x + 1.0f; });
      MPI_Barrier(MPI_COMM_WORLD);
      const auto start = std::chrono::steady_clock::now();
      if (grouped) weftGroupStart();
      for (int i = 0; i < calls; ++i) {
        if (weftAllReduce(send[i].data(), recv[i].data(), count, weftFloat32, weftSum, comm, nullptr) !=
            weftSuccess)
          MPI_Abort(MPI_COMM_WORLD, 1);
      }
      if (grouped) weftGroupEnd();
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(us.begin(), us.end());
    if (rank == 0)
      std::printf("%-10s %d x %s KiB: median %.0f us, fastest %.0f\n", grouped ? "group" : "one by one", calls,
                  argv[2], us[us.size() / 2], us[0]);
  }
  weftCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
