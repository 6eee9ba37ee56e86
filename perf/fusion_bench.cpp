#include "fusion_bench.h"

#include <mpi.h>

#include <algorithm>
#include <new>
#include <string>

#include "check.h"
#include "colls.h"
#include "types.h"

namespace commperf {

namespace {

weftCollType_t collTypeOf(const CollDesc& desc) {
  switch (desc.kind) {
    case CollKind::kAllGather:
      return weftCollAllGather;
    case CollKind::kReduceScatter:
      return weftCollReduceScatter;
    default:
      return weftCollAllReduce;
  }
}

// The counts of one call whose weft.h count is `count` (AllGather's sendcount, ReduceScatter's recvcount):
// desc.counts takes nccl-tests' count, AllGather's output and ReduceScatter's input.
CollCounts callCounts(const CollDesc& desc, size_t count, int rank, int nranks) {
  const size_t scale = desc.algScalesWithRanks ? static_cast<size_t>(nranks) : 1;
  return desc.counts(count * scale, rank, nranks);
}

}  // namespace

FusionBuffers::FusionBuffers(int calls, size_t sendBytes, size_t recvBytes, bool single) {
  try {
    for (int i = 0; i < calls; ++i) {
      send.push_back(allocate(sendBytes));
      recv.push_back(allocate(recvBytes));
    }
    if (single) {
      singleSend = allocate(sendBytes * static_cast<size_t>(calls));
      singleRecv = allocate(recvBytes * static_cast<size_t>(calls));
    }
  } catch (...) {
    release();
    throw;
  }
}

unsigned char* FusionBuffers::allocate(size_t bytes) { return allocateBuffer(bytes); }

void FusionBuffers::free(unsigned char* p) { freeBuffer(p); }

void FusionBuffers::release() {
  for (unsigned char* p : send) free(p);
  for (unsigned char* p : recv) free(p);
  send.clear();
  recv.clear();
  free(singleSend);
  free(singleRecv);
  singleSend = singleRecv = nullptr;
}

LaunchStats launchStatsOf(weftComm_t comm, int rank, const Side& call) {
  weftCommStats_t before = WEFT_COMM_STATS_INITIALIZER, after = WEFT_COMM_STATS_INITIALIZER;
  weftCheck(weftCommGetStats(comm, &before), "weftCommGetStats", rank);
  call();
  weftCheck(weftCommGetStats(comm, &after), "weftCommGetStats", rank);
  long long local[4] = {static_cast<long long>(after.opsSubmitted - before.opsSubmitted),
                        static_cast<long long>(after.collectivesLaunched - before.collectivesLaunched),
                        static_cast<long long>(after.bytesFused - before.bytesFused), 0};
  local[3] = -local[1];  // the minimum of the launches, as the maximum of their negation
  long long global[4] = {};
  MPI_Allreduce(local, global, 4, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  LaunchStats s;
  s.measured = true;
  s.ops = global[0];
  s.launches = global[1];
  s.bytesFused = global[2];
  s.launchesMin = -global[3];
  return s;
}

PeerSides::PeerSides(std::vector<Side>& sides, std::vector<Measure>& measures, const Peers& peers,
                     const CollDesc& desc, weftDataType_t type, std::optional<weftRedOp_t> op,
                     const std::vector<CallArgs>& args, int rank)
    : measures_(measures), sideOf_(peers.size(), 0) {
  measures.resize(peers.size());
  for (size_t p = 0; p < peers.size(); ++p) {
    Peer* peer = peers[p].get();
    std::string skipped = peer->unsupported(desc, type, op);
    if (skipped.empty()) skipped = peer->unsupportedManyBuffers(desc);
    measures[p].skipped = skipped;
    if (!skipped.empty()) continue;
    sides.emplace_back([&desc, &args, peer, rank] {
      for (const CallArgs& a : args) peerCall(*peer, desc, a, rank);
    });
    sideOf_[p] = sides.size() - 1;
  }
}

void PeerSides::fill(const std::vector<std::vector<double>>& times, double bytes, double busFactor) const {
  for (size_t p = 0; p < sideOf_.size(); ++p) {
    if (sideOf_[p]) fillMeasure(measures_[p], times[sideOf_[p]], bytes, busFactor);
  }
}

void PeerSides::check(const Peers& peers, const CollDesc& desc, const std::vector<CallArgs>& args, int rank,
                      int root, const std::function<void()>& prepare,
                      const std::function<long long()>& countWrong) const {
  for (size_t p = 0; p < sideOf_.size(); ++p) {
    if (!sideOf_[p]) continue;
    Peer& peer = *peers[p];
    prepare();
    for (const CallArgs& a : args) peerCall(peer, desc, a, rank);
    measures_[p].wrong = peer.checksRank(desc, rank, root) ? countWrong() : sumOverRanks(0);
  }
}

double FusionRow::ratio(const Measure& a, const Measure& b) {
  if (!a.ran || !b.ran || a.timeUs <= 0 || b.timeUs <= 0) return 0;
  return a.timeUs / b.timeUs;
}

long long FusionRow::wrong() const {
  long long total = 0;
  for (const Measure* m : {&fused, &unfused, &single})
    if (m->ran && m->wrong > 0) total += m->wrong;
  for (const Measure& m : peers)
    if (m.ran && m.wrong > 0) total += m.wrong;
  return total;
}

double fusionBytesPerRank(const FusionCase& fusionCase, const CollDesc& desc, int nranks) {
  const CollCounts counts = callCounts(desc, fusionCase.bytes, 0, nranks);  // in bytes: one-byte elements
  return 2.0 * fusionCase.calls * static_cast<double>(counts.sendCount + counts.recvCount);
}

FusionBench::FusionBench(weftComm_t comm, int rank, int nranks, const Options& options, const Peers& peers)
    : comm_(comm), rank_(rank), nranks_(nranks), options_(options), peers_(peers) {}

FusionBench::~FusionBench() {
  // Back to the environment's settings; a failure here changes nothing that is measured.
  for (weftCollType_t coll : collsSet_) weftCommSetFusion(comm_, coll, nullptr);
}

void FusionBench::setMode(weftCollType_t coll, weftFusionMode_t mode) {
  const bool set = std::find(collsSet_.begin(), collsSet_.end(), coll) != collsSet_.end();
  if (set && coll_ == coll && mode_ == mode) return;
  weftFusionConfig_t config = WEFT_FUSION_CONFIG_INITIALIZER;
  config.mode = mode;
  weftCheck(weftCommSetFusion(comm_, coll, &config), "weftCommSetFusion", rank_);
  if (!set) collsSet_.push_back(coll);
  coll_ = coll;
  mode_ = mode;
}

LaunchStats FusionBench::launchesOf(const Side& call) { return launchStatsOf(comm_, rank_, call); }

FusionRow FusionBench::run(const CollDesc& desc, const FusionCase& fusionCase, weftDataType_t type,
                           std::optional<weftRedOp_t> op) {
  size_t elemSize = typeSize(type);
  int calls = fusionCase.calls;
  FusionRow row;
  row.desc = &desc;
  row.fusionCase = fusionCase;
  row.count = fusionCase.bytes / elemSize;
  row.bytes = row.count * elemSize;
  row.type = type;
  row.op = op;
  size_t count = row.count, total = row.count * static_cast<size_t>(calls);
  const weftCollType_t coll = collTypeOf(desc);

  CheckContext ctx{&desc, type, op, rank_, nranks_, options_.root, callCounts(desc, count, rank_, nranks_)};
  CheckContext singleCtx{&desc, type, op, rank_, nranks_, options_.root, callCounts(desc, total, rank_, nranks_)};
  const size_t sendCount = ctx.counts.sendCount, recvCount = ctx.counts.recvCount;
  FusionBuffers buffers(calls, sendCount * elemSize, recvCount * elemSize, true);
  // Buffer i holds elements [i * sendCount, (i + 1) * sendCount) of one input, the single call's buffer all of
  // them: then call i's results are the single call's over that slice, wherever the collective puts them.
  auto fillInputs = [&] {
    for (int i = 0; i < calls; ++i) fillInput(ctx, buffers.send[i], sendCount, static_cast<size_t>(i) * sendCount);
    fillInput(singleCtx, buffers.singleSend, singleCtx.counts.sendCount);
  };
  auto poisonOutputs = [&] {
    for (int i = 0; i < calls; ++i) poisonOutput(ctx, buffers.recv[i], recvCount);
  };
  auto countWrongOutputs = [&] {
    long long wrong = 0;
    for (int i = 0; i < calls; ++i)
      wrong += static_cast<long long>(countWrong(ctx, buffers.recv[i], static_cast<size_t>(i) * sendCount));
    return sumOverRanks(wrong);
  };
  fillInputs();

  const weftRedOp_t callOp = op.value_or(weftSum);
  std::vector<CallArgs> args;
  args.reserve(static_cast<size_t>(calls));
  for (int i = 0; i < calls; ++i)
    args.push_back(
        CallArgs{buffers.send[i], buffers.recv[i], count, type, callOp, options_.root, rank_, nranks_, comm_});
  CallArgs singleArgs{
      buffers.singleSend, buffers.singleRecv, total, type, callOp, options_.root, rank_, nranks_, comm_};

  const std::string inGroup = std::string(desc.name) + " (in a group)";
  const std::string alone = std::string(desc.name) + " (single)";
  auto group = [&] {
    weftCheck(weftGroupStart(), "weftGroupStart", rank_);
    for (const CallArgs& a : args) weftCheck(desc.call(a), inGroup.c_str(), rank_);
    weftCheck(weftGroupEnd(), "weftGroupEnd", rank_);
  };
  auto single = [&] { weftCheck(desc.call(singleArgs), alone.c_str(), rank_); };

  // Sides 0-2 are Weft's forms; each peer that can run this shape on N buffer sets adds one.
  std::vector<Side> sides{[&] {
                            setMode(coll, weftFusionAuto);
                            group();
                          },
                          [&] {
                            setMode(coll, weftFusionOff);
                            group();
                          },
                          single};
  const PeerSides peerSides(sides, row.peers, peers_, desc, type, op, args, rank_);

  auto times = timeRounds(sides, options_);
  double bytes = algBytes(desc, total, elemSize, nranks_);
  double busFactor = desc.busFactor(nranks_);
  fillMeasure(row.fused, times[0], bytes, busFactor);
  fillMeasure(row.unfused, times[1], bytes, busFactor);
  fillMeasure(row.single, times[2], bytes, busFactor);
  peerSides.fill(times, bytes, busFactor);

  // One more group of each form, untimed: the statistics' deltas around it and, with -c 1, its results from
  // fresh inputs into poisoned outputs. The buffers are shared, so every form starts afresh.
  auto probeGroup = [&](weftFusionMode_t mode, Measure& m, LaunchStats& s) {
    if (options_.check) {
      fillInputs();
      poisonOutputs();
    }
    setMode(coll, mode);
    s = launchesOf(group);
    if (options_.check) m.wrong = countWrongOutputs();
  };
  probeGroup(weftFusionAuto, row.fused, row.fusedStats);
  probeGroup(weftFusionOff, row.unfused, row.unfusedStats);
  if (options_.check) poisonOutput(singleCtx, buffers.singleRecv, singleCtx.counts.recvCount);
  row.singleStats = launchesOf(single);
  if (options_.check)
    row.single.wrong = sumOverRanks(static_cast<long long>(countWrong(singleCtx, buffers.singleRecv)));
  if (options_.check) {
    peerSides.check(
        peers_, desc, args, rank_, options_.root,
        [&] {
          fillInputs();
          poisonOutputs();
        },
        countWrongOutputs);
  }
  return row;
}

}  // namespace commperf
