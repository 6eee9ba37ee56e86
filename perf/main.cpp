// commperf: nccl-tests-style bandwidth benchmark for Weft. MPI launches the ranks, carries the unique id and
// combines timings and error counts; with --peer, the same sweep also runs through Open MPI and/or Gloo,
// interleaved with Weft's, for side-by-side ratios.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "bench.h"
#include "bounds.h"
#include "calibrate.h"
#include "choices.h"
#include "colls.h"
#include "fusion_bench.h"
#include "info.h"
#include "options.h"
#include "peer.h"
#include "plan_bench.h"
#include "report.h"
#include "summary.h"
#include "weft/weft.h"

using namespace commperf;

namespace {

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

// Rank 0 measures the bounds alone: the other ranks wait in a barrier they poll slowly, so that they take no
// CPU from the measurement (MPI_Barrier would spin).
std::optional<Bounds> measureBoundsOnRankZero(const Options& options, int rank) {
  std::optional<Bounds> bounds;
  if (rank == 0) bounds = measureBounds(options.boundsBytes);
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  for (int done = 0; !done;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) usleep(1000);
  }
  return bounds;
}

int finish(int code) {
  MPI_Finalize();
  return code;
}

ParseResult checkAgainstRun(const Options& options, int nranks) {
  if (options.root >= nranks)
    return {ParseStatus::kError, "--root " + std::to_string(options.root) + " is not a rank (there are " +
                                     std::to_string(nranks) + ")"};
  // --bounds fills three arrays of this size; more than the machine holds would end in the OOM killer.
  double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (options.bounds && memory > 0 && 3.0 * static_cast<double>(options.boundsBytes) > 0.75 * memory)
    return {ParseStatus::kError, "--bounds_bytes " + std::to_string(options.boundsBytes) +
                                     ": three such arrays need more than 3/4 of this machine's memory"};
  // --fusion allocates N buffer pairs and the single call's pair on every rank (all on this host).
  for (const std::string& name : options.fusionColls) {
    for (const FusionCase& c : options.fusion) {
      double perHost = fusionBytesPerRank(c, *findColl(name), nranks) * nranks;
      if (memory > 0 && perHost > 0.75 * memory)
        return {ParseStatus::kError, "--fusion " + std::to_string(c.calls) + ":" + std::to_string(c.bytes) + " (" +
                                         name + "): the buffers of " + std::to_string(nranks) +
                                         " ranks need more than 3/4 of this machine's memory"};
    }
  }
  // --plan allocates N buffer pairs and a copy of the outputs on every rank.
  for (const PlanCase& c : options.plan) {
    double perHost = planBytesPerRank(c) * nranks;
    if (memory > 0 && perHost > 0.75 * memory)
      return {ParseStatus::kError, "--plan " + std::to_string(c.calls) + ":" + std::to_string(c.bytes) +
                                       ": the buffers of " + std::to_string(nranks) +
                                       " ranks need more than 3/4 of this machine's memory"};
  }
  bool wantsGloo = std::find(options.peers.begin(), options.peers.end(), PeerKind::kGloo) != options.peers.end();
  if (wantsGloo && !glooBuiltIn())
    return {ParseStatus::kError,
            "--peer gloo: commperf was built without Gloo (install Debian's libgloo-dev and "
            "re-run cmake)"};
  return {};
}

// Rank 0 creates (truncates) the --json and --csv files; every rank learns whether that worked.
bool outputsWritable(const Options& options, int rank) {
  int ok = 1;
  if (rank == 0) {
    for (const std::string& path : {options.jsonPath, options.csvPath, options.choicesPath}) {
      if (path.empty()) continue;
      std::FILE* f = std::fopen(path.c_str(), "w");
      if (!f) {
        std::fprintf(stderr, "commperf: error: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
        ok = 0;
        break;
      }
      std::fclose(f);
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok == 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Every rank parses the same arguments, so every rank takes the same branch; only rank 0 speaks. A
  // malformed command line is answered before MPI starts: an MPI job that finalizes moments after init
  // has been seen to crash inside Open MPI's teardown on a loaded machine.
  Options options;
  ParseResult parsed = parseOptions(argc, argv, options);
  if (parsed.status != ParseStatus::kRun) {
    const char* launcherRank = std::getenv("OMPI_COMM_WORLD_RANK");
    bool speaks = launcherRank == nullptr || std::strcmp(launcherRank, "0") == 0;
    if (speaks && parsed.status == ParseStatus::kHelp) std::fputs(usage(argv[0]).c_str(), stdout);
    if (speaks && parsed.status == ParseStatus::kError) {
      std::fprintf(stderr, "commperf: error: %s; see --help\n", parsed.error.c_str());
    }
    return parsed.status == ParseStatus::kHelp ? 0 : 2;
  }

  MPI_Init(&argc, &argv);
  allocateFrom(options.memory);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  parsed = checkAgainstRun(options, nranks);
  if (parsed.status == ParseStatus::kError) {
    if (rank == 0) std::fprintf(stderr, "commperf: error: %s; see --help\n", parsed.error.c_str());
    return finish(2);
  }

  // A file that cannot be written is found now, not after the sweep.
  if (!outputsWritable(options, rank)) return finish(2);

  std::optional<Bounds> bounds;
  if (options.bounds) bounds = measureBoundsOnRankZero(options, rank);

  Peers peers;
  std::string peerError;
  if (!makePeers(options, rank, nranks, peers, peerError)) {
    if (rank == 0) std::fprintf(stderr, "commperf: error: %s\n", peerError.c_str());
    return finish(1);
  }

  RunInfo info = gatherRunInfo(rank, nranks, peers);
  info.bounds = bounds;
  std::FILE* out = stdout;
  if (rank == 0) printHeader(out, options, info);

  Results results;
  weftComm_t comm = nullptr;
  if (!options.colls.empty() || !options.fusion.empty() || !options.plan.empty() ||
      !options.calibratePath.empty() || !options.choicesPath.empty())
    comm = initComm(rank, nranks);
  if ((!options.calibratePath.empty() && !calibrate(comm, rank, nranks, options)) ||
      (!options.choicesPath.empty() && !checkChoices(comm, rank, nranks, options))) {
    weftCheck(weftCommDestroy(comm), "weftCommDestroy", rank);
    return finish(2);
  }
  if (!options.colls.empty()) {
    std::vector<size_t> sizes = sweepSizes(options);
    size_t capacity = *std::max_element(sizes.begin(), sizes.end());
    try {
      Bench bench(comm, rank, nranks, options, capacity, peers);
      for (const std::string& collName : options.colls) {
        CollSummary summary;
        summary.desc = findColl(collName);
        summary.weftAlgorithm = weftAlgorithmFor(info.weftAlgo, collName);
        for (const auto& peer : peers) {
          PeerSummary& s = summary.peers.emplace_back();
          s.library = peer->library();
          s.algorithm = peer->algorithm(*summary.desc);
        }
        if (rank == 0) printCollHeader(out, summary, info);
        for (weftDataType_t type : options.types) {
          std::vector<std::optional<weftRedOp_t>> ops(options.ops.begin(), options.ops.end());
          if (!summary.desc->hasOp) ops = {std::nullopt};
          for (std::optional<weftRedOp_t> op : ops) {
            for (size_t size : sizes) {
              Row row = bench.run(*summary.desc, size, type, op);
              summary.add(row);
              if (rank == 0) printRow(out, row, info);
              if (rank == 0) results.rows.push_back(std::move(row));
            }
          }
        }
        summary.finish();
        if (rank == 0) printCollFooter(out, summary, info);
        results.totalWrong += summary.totalWrong();
        results.colls.push_back(std::move(summary));
      }
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "commperf: rank %d: cannot allocate two buffers of %zu bytes\n", rank, capacity);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (!options.fusion.empty()) {
    FusionBench fusion(comm, rank, nranks, options, peers);
    if (rank == 0) printFusionHeader(out, info);
    for (const std::string& name : options.fusionColls) {
      const CollDesc& desc = *findColl(name);
      if (rank == 0) printFusionColumns(out, desc, info);
      std::vector<std::optional<weftRedOp_t>> ops(options.ops.begin(), options.ops.end());
      if (!desc.hasOp) ops = {std::nullopt};
      for (const FusionCase& fusionCase : options.fusion) {
        for (weftDataType_t type : options.types) {
          for (std::optional<weftRedOp_t> op : ops) {
            FusionRow row;
            try {
              row = fusion.run(desc, fusionCase, type, op);
            } catch (const std::bad_alloc&) {
              std::fprintf(stderr, "commperf: rank %d: cannot allocate the buffers of --fusion %d:%zu (%s)\n",
                           rank, fusionCase.calls, fusionCase.bytes, desc.name);
              MPI_Abort(MPI_COMM_WORLD, 1);
            }
            results.totalWrong += row.wrong();
            if (rank == 0) printFusionRow(out, row, info);
            results.fusion.push_back(std::move(row));
          }
        }
      }
    }
    if (rank == 0) printFusionFooter(out, results.fusion, info);
  }
  if (!options.plan.empty()) {
    PlanBench plans(comm, rank, nranks, options, peers);
    if (rank == 0) printPlanHeader(out, info);
    for (const PlanCase& planCase : options.plan) {
      for (weftDataType_t type : options.types) {
        for (weftRedOp_t op : options.ops) {
          PlanRow row;
          try {
            row = plans.run(planCase, type, op);
          } catch (const std::bad_alloc&) {
            std::fprintf(stderr, "commperf: rank %d: cannot allocate the buffers of --plan %d:%zu\n", rank,
                         planCase.calls, planCase.bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
          }
          results.totalWrong += row.wrong();
          results.planMismatches += row.totalMismatches();
          if (rank == 0) printPlanRow(out, row, info);
          results.plan.push_back(std::move(row));
        }
      }
    }
    // The compile time of a large plan, once per run, in the first type and op given.
    try {
      results.planCompile = plans.compile(kPlanCompileOps, kPlanCompileBytes, options.types.front(),
                                          options.ops.front(), options.rounds);
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "commperf: rank %d: cannot allocate the buffers of the %d-call plan\n", rank,
                   kPlanCompileOps);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) printPlanFooter(out, results.plan, results.planCompile, info);
  }
  if (comm) weftCheck(weftCommDestroy(comm), "weftCommDestroy", rank);
  if (rank == 0) printSummary(out, results.colls, info);

  // A plan whose outputs differ from the eager calls' is as wrong as a wrong element.
  int code = results.totalWrong > 0 || results.planMismatches > 0 ? 1 : 0;
  if (rank == 0 && !options.jsonPath.empty() && !writeJson(options.jsonPath, options, info, results)) {
    std::perror(("commperf: cannot write " + options.jsonPath).c_str());
    code = 2;
  }
  if (rank == 0 && !options.csvPath.empty() && !writeCsv(options.csvPath, options, info, results)) {
    std::perror(("commperf: cannot write " + options.csvPath).c_str());
    code = 2;
  }
  peers.clear();  // before MPI_Finalize, which the MPI peer must not outlive
  return finish(code);
}
