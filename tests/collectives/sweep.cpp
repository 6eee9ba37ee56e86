// The collectives section: for each WEFT_ALGO setting a fresh communicator and the sweep of the
// collectives that setting forces (all of them for the tuner's choice).
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "coll_case.h"
#include "harness.h"
#include "sections.h"

namespace colltest {

namespace {

struct AlgoSetting {
  const char* algo;  // WEFT_ALGO value; nullptr: unset (the tuner's choice)
  unsigned colls;    // collectives it forces (Barrier runs under every setting)
};

const AlgoSetting kSettings[] = {
    {nullptr, kAllCollBits},
    {"allreduce:ring;reducescatter:ring;allgather:ring",
     collBit(Coll::kAllReduce) | collBit(Coll::kReduceScatter) | collBit(Coll::kAllGather)},
    {"allreduce:recursive_doubling;reducescatter:rabenseifner;allgather:bruck",
     collBit(Coll::kAllReduce) | collBit(Coll::kReduceScatter) | collBit(Coll::kAllGather)},
    {"allreduce:rabenseifner", collBit(Coll::kAllReduce)},
    {"allreduce:hierarchical;allgather:hierarchical;broadcast:hierarchical",
     collBit(Coll::kAllReduce) | collBit(Coll::kAllGather) | collBit(Coll::kBroadcast)},
    {"allreduce:recursive_doubling:0-4K;allreduce:ring:4K-inf", collBit(Coll::kAllReduce)},
    {"broadcast:binomial_tree;reduce:binomial_tree;alltoall:pairwise",
     collBit(Coll::kBroadcast) | collBit(Coll::kReduce) | collBit(Coll::kAllToAll)},
};

// Collectives named in a WEFT_ALGO string ("coll:algo;coll:algo").
unsigned collsNamedIn(const std::string& algo) {
  static const std::pair<const char*, Coll> kNames[] = {
      {"allreduce", Coll::kAllReduce}, {"broadcast", Coll::kBroadcast},         {"reduce", Coll::kReduce},
      {"allgather", Coll::kAllGather}, {"reducescatter", Coll::kReduceScatter}, {"alltoall", Coll::kAllToAll}};
  unsigned bits = 0;
  size_t start = 0;
  while (start <= algo.size()) {
    size_t end = algo.find(';', start);
    if (end == std::string::npos) end = algo.size();
    const std::string entry = algo.substr(start, end - start);
    const std::string coll = entry.substr(0, entry.find(':'));
    for (const auto& [name, c] : kNames) {
      if (coll == name) bits |= collBit(c);
    }
    start = end + 1;
  }
  return bits;
}

void sweepCollective(const CommView& view, Coll coll, Report& report) {
  const Options& opt = harness().options;
  const int n = view.size;
  std::vector<int> roots;
  if (coll == Coll::kBroadcast || coll == Coll::kReduce) {
    if (n <= 3) {
      for (int r = 0; r < n; ++r) roots.push_back(r);
    } else {
      roots = {0, n - 1};
    }
  } else {
    roots = {0};
  }
  std::vector<weftRedOp_t> ops;
  if (isReducing(coll)) {
    for (weftRedOp_t op : kAllOps) {
      if (opt.opFilter < 0 || opt.opFilter == op) ops.push_back(op);
    }
  } else {
    ops = {weftSum};
  }
  for (size_t count : opt.counts) {
    const bool restricted = count > kFullSweepMaxCount && !opt.full;
    for (int ti = 0; ti < WEFT_NUM_DATA_TYPES; ++ti) {
      const weftDataType_t type = kAllTypes[ti];
      if (opt.typeFilter >= 0 && opt.typeFilter != type) continue;
      for (weftRedOp_t op : ops) {
        const int pick = ti + static_cast<int>(op);
        for (int placement = 0; placement < 2; ++placement) {
          // Large counts: every type x op once, alternating placement and root.
          if (restricted && placement != pick % 2) continue;
          for (size_t ri = 0; ri < roots.size(); ++ri) {
            if (restricted && ri != static_cast<size_t>(pick) % roots.size()) continue;
            CaseParams params;
            params.coll = coll;
            params.type = type;
            params.op = op;
            params.count = count;
            params.inPlace = placement == 1;
            params.root = roots[ri];
            runCase(view, params, report);
          }
        }
      }
    }
  }
}

// Buffers that overlap outside weft.h's in-place layouts are refused on every rank before anything moves,
// untouched, and the communicator stays usable (the sweep goes on with it). Shifted by one element, blocks of
// four are in place on no rank.
void checkOverlapsRefused(const CommView& view, Report& report) {
  constexpr size_t kCount = 4;
  const size_t blocks = static_cast<size_t>(view.size);
  std::vector<float> buffer((blocks + 1) * kCount);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  const std::vector<float> before = buffer;
  float* b = buffer.data();
  const std::pair<const char*, weftResult_t> calls[] = {
      {"weftAllReduce", weftAllReduce(b, b + 1, kCount, weftFloat32, weftSum, view.comm, nullptr)},
      {"weftAllGather", weftAllGather(b + 1, b, kCount, weftFloat32, view.comm, nullptr)},
      {"weftReduceScatter", weftReduceScatter(b, b + 1, kCount, weftFloat32, weftSum, view.comm, nullptr)},
      {"weftAllToAll", weftAllToAll(b, b + 1, kCount, weftFloat32, view.comm, nullptr)},
  };
  for (const auto& [name, result] : calls) {
    ++report.calls;
    if (result != weftInvalidArgument) {
      reportFailure(report, std::string(name) + " on buffers one element apart returned " +
                                weftGetErrorString(result) + ", expected weftInvalidArgument");
    }
  }
  if (std::string(weftGetLastErrorMessage()).find("overlap") == std::string::npos) {
    reportFailure(report, std::string("the last refusal's message does not say the buffers overlap: ") +
                              weftGetLastErrorMessage());
  }
  if (buffer != before) reportFailure(report, "a refused call with overlapping buffers changed them");
}

void runSetting(const char* algo, unsigned colls, Report& report) {
  const Options& opt = harness().options;
  const double start = nowSeconds();
  CommView view = createWorldComm(algo);
  int count = -1, rank = -1;
  expectOk(weftCommCount(view.comm, &count), "weftCommCount");
  expectOk(weftCommUserRank(view.comm, &rank), "weftCommUserRank");
  if (count != view.size || rank != view.rank) {
    reportFailure(report, "world communicator reports rank " + std::to_string(rank) + " of " +
                              std::to_string(count) + ", expected " + std::to_string(view.rank) + " of " +
                              std::to_string(view.size) + " (algo=" + harness().algo + ")");
  }
  if (algo == nullptr) checkOverlapsRefused(view, report);
  report.allReduceHash = 0;
  for (int c = 0; c < kNumColls; ++c) {
    const Coll coll = static_cast<Coll>(c);
    if (coll == Coll::kBarrier || !(colls & collBit(coll)) || !(opt.collMask & collBit(coll))) continue;
    const double t0 = nowSeconds();
    const uint64_t calls0 = report.calls;
    sweepCollective(view, coll, report);
    if (opt.verbose && harness().worldRank == 0) {
      std::printf("  %-13s algo=%s: %llu calls, %.2f s\n", collName(coll), harness().algo.c_str(),
                  static_cast<unsigned long long>(report.calls - calls0), nowSeconds() - t0);
      std::fflush(stdout);
    }
  }
  if (opt.collMask & collBit(Coll::kBarrier)) {
    for (int i = 0; i < 3; ++i) {
      CaseParams params;
      params.coll = Coll::kBarrier;
      runCase(view, params, report);
    }
  }
  // Every rank must hold bit-identical AllReduce results (weft's algorithms contract).
  if (!sameOnAllRanks(report.allReduceHash)) {
    reportFailure(report,
                  "AllReduce results are not bit-identical on all ranks (hash of all results differs), algo=" +
                      harness().algo);
  }
  destroyComm(view);
  if (opt.verbose && harness().worldRank == 0) {
    std::printf("  setting algo=%s done in %.2f s\n", harness().algo.c_str(), nowSeconds() - start);
    std::fflush(stdout);
  }
}

}  // namespace

Report runCollectivesSection() {
  const Options& opt = harness().options;
  Report report;
  resetSalt(1000000000);
  if (opt.algoGiven) {
    const bool unset = opt.algo == "default" || opt.algo.empty();
    runSetting(unset ? nullptr : opt.algo.c_str(), unset ? kAllCollBits : collsNamedIn(opt.algo), report);
  } else {
    for (const AlgoSetting& setting : kSettings) runSetting(setting.algo, setting.colls, report);
  }
  return report;
}

}  // namespace colltest
