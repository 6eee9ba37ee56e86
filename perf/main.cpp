// commperf: nccl-tests-style bandwidth benchmark for Weft. MPI only launches the ranks, carries the unique id
// and combines timings and error counts; every measured byte goes through Weft.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "bench.h"
#include "colls.h"
#include "options.h"
#include "report.h"
#include "weft/weft.h"

using namespace commperf;

namespace {

std::vector<std::string> gatherRankLines(int rank, int nranks) {
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  char line[MPI_MAX_PROCESSOR_NAME + 64] = {};
  std::snprintf(line, sizeof line, "Rank %2d Pid %6d on %10s", rank, static_cast<int>(getpid()), host);
  std::vector<char> all(rank == 0 ? sizeof line * nranks : 0);
  MPI_Gather(line, sizeof line, MPI_CHAR, all.data(), sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> lines;
  if (rank == 0)
    for (int r = 0; r < nranks; ++r) lines.emplace_back(all.data() + r * sizeof line);
  return lines;
}

weftComm_t initComm(int rank, int nranks) {
  weftUniqueId id{};
  if (rank == 0) weftCheck(weftGetUniqueId(&id), "weftGetUniqueId", rank);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  weftComm_t comm = nullptr;
  weftCheck(weftCommInitRank(&comm, nranks, id, rank), "weftCommInitRank", rank);
  int count = 0, userRank = -1;
  weftCheck(weftCommCount(comm, &count), "weftCommCount", rank);
  weftCheck(weftCommUserRank(comm, &userRank), "weftCommUserRank", rank);
  if (count != nranks || userRank != rank) {
    std::fprintf(stderr, "commperf: rank %d: communicator reports rank %d of %d, expected %d of %d\n", rank,
                 userRank, count, rank, nranks);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return comm;
}

int finish(int code) {
  MPI_Finalize();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  // Every rank parses the same arguments, so every rank takes the same branch; only rank 0 speaks.
  Options options;
  ParseResult parsed = parseOptions(argc, argv, options);
  if (parsed.status == ParseStatus::kHelp) {
    if (rank == 0) std::fputs(usage(argv[0]).c_str(), stdout);
    return finish(0);
  }
  if (parsed.status == ParseStatus::kRun && options.root >= nranks)
    parsed = {ParseStatus::kError, "--root " + std::to_string(options.root) + " is not a rank (there are " +
                                       std::to_string(nranks) + ")"};
  if (parsed.status == ParseStatus::kError) {
    if (rank == 0) std::fprintf(stderr, "commperf: error: %s\nTry '%s --help'.\n", parsed.error.c_str(), argv[0]);
    return finish(2);
  }

  std::vector<size_t> sizes = sweepSizes(options);
  size_t capacity = *std::max_element(sizes.begin(), sizes.end());

  RunInfo info;
  info.nranks = nranks;
  weftCheck(weftGetVersion(&info.version), "weftGetVersion", rank);
  info.rankLines = gatherRankLines(rank, nranks);
  std::FILE* out = stdout;
  if (rank == 0) printHeader(out, options, info);

  weftComm_t comm = initComm(rank, nranks);
  long long totalWrong = 0;
  JsonReport json(options, info);
  try {
    Bench bench(comm, rank, nranks, options, capacity);
    for (const std::string& collName : options.colls) {
      const CollDesc& desc = *findColl(collName);
      if (rank == 0) printCollHeader(out, desc.name);
      long long collWrong = 0;
      double busBwSum = 0;
      int busBwCount = 0;
      for (weftDataType_t type : options.types) {
        std::vector<std::optional<weftRedOp_t>> ops(options.ops.begin(), options.ops.end());
        if (!desc.hasOp) ops = {std::nullopt};
        for (std::optional<weftRedOp_t> op : ops) {
          for (size_t size : sizes) {
            Row row = bench.run(desc, size, type, op);
            for (const Measure* m : {&row.outOfPlace, &row.inPlace}) {
              if (!m->ran) continue;
              busBwSum += m->busBw;
              ++busBwCount;
              collWrong += std::max(0LL, m->wrong);
            }
            if (rank == 0) printRow(out, row);
            if (rank == 0 && !options.jsonPath.empty()) json.add(row);
          }
        }
      }
      if (rank == 0) printCollFooter(out, collWrong, busBwCount ? busBwSum / busBwCount : 0.0);
      totalWrong += collWrong;
    }
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "commperf: rank %d: cannot allocate two buffers of %zu bytes\n", rank, capacity);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  int code = totalWrong > 0 ? 1 : 0;
  if (rank == 0 && !options.jsonPath.empty() && !json.write(options.jsonPath, totalWrong)) {
    std::perror(("commperf: cannot write " + options.jsonPath).c_str());
    code = 2;
  }
  weftCheck(weftCommDestroy(comm), "weftCommDestroy", rank);
  return finish(code);
}
