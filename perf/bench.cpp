#include "bench.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <thread>

#include "check.h"
#include "stats.h"
#include "turn_order.h"
#include "types.h"

namespace commperf {

namespace {

constexpr std::align_val_t kAlignment{64};
BufferSource bufferSource = BufferSource::Heap;

void weftMemoryCheck(weftResult_t result, const char* what) {
  if (result == weftSuccess) return;
  std::fprintf(stderr, "commperf: %s failed: %s\n", what, weftGetLastErrorMessage());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// Other work between calls (--gap_us): the rank spins, touching no memory.
void spinFor(std::chrono::microseconds gap) {
  const auto until = std::chrono::steady_clock::now() + gap;
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

void allocateFrom(BufferSource source) { bufferSource = source; }

unsigned char* allocateBuffer(size_t bytes) {
  switch (bufferSource) {
    case BufferSource::Heap:
      return static_cast<unsigned char*>(::operator new(bytes, kAlignment));
    case BufferSource::Malloc:
      if (void* p = std::malloc(std::max<size_t>(bytes, 1))) return static_cast<unsigned char*>(p);
      throw std::bad_alloc();
    case BufferSource::Weft:
      break;
  }
  void* p = nullptr;
  weftMemoryCheck(weftMemAlloc(&p, bytes), "weftMemAlloc");
  return static_cast<unsigned char*>(p);
}

void freeBuffer(unsigned char* p) {
  if (p == nullptr) return;
  switch (bufferSource) {
    case BufferSource::Heap:
      return ::operator delete(p, kAlignment);
    case BufferSource::Malloc:
      return std::free(p);
    case BufferSource::Weft:
      return weftMemoryCheck(weftMemFree(p), "weftMemFree");
  }
}

// Warm-up first, then the rounds, the sides taking their turns in a balanced order (turn_order.h: each goes
// first, and follows each other one, equally often).
std::vector<std::vector<double>> timeRounds(const std::vector<Side>& sides, const Options& options, bool pause,
                                            const std::function<void(size_t)>& touch) {
  for (const Side& side : sides)
    for (int i = 0; i < options.warmupIters; ++i) side();
  int rounds = options.rounds, iters = options.itersPerRound();
  size_t nsides = sides.size();
  std::vector<double> local(nsides * rounds), global(nsides * rounds);
  for (int r = 0; r < rounds; ++r) {
    const std::vector<size_t> order = turnOrder(nsides, static_cast<size_t>(r));
    for (size_t turn = 0; turn < nsides; ++turn) {
      const size_t s = order[turn];
      // Gloo's background thread keeps a core busy for a while after its last call (measured: Weft's rounds
      // right after Gloo's took a 4 ms scheduler tick more, at 2 ranks on 2 cores); a short sleep lets the
      // previous library's threads go idle before this one's turn.
      if (pause && nsides > 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      // One untimed call first: a library whose threads slept during the other's turn pays for waking up
      // here, not in the timed calls (back-to-back calls, as in a real job, do not pay it). Open MPI's first
      // call after the pause is slow too, and skews the ranks' exits by 5-10 us: a barrier before the
      // untimed call takes that, so that the barrier that starts the timed calls is a warm one whichever
      // library's turn it is (measured at 2 ranks: a cold barrier added about 10 us to one timed call of
      // Weft's in four rounds, and to none of Open MPI's, whose untimed call had warmed it).
      MPI_Barrier(MPI_COMM_WORLD);
      if (touch) touch(s);
      sides[s]();
      MPI_Barrier(MPI_COMM_WORLD);
      std::chrono::steady_clock::duration took{};
      if (touch || options.gapUs > 0) {
        for (int i = 0; i < iters; ++i) {
          if (options.gapUs > 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            spinFor(std::chrono::microseconds(options.gapUs));
          }
          if (touch) touch(s);
          auto start = std::chrono::steady_clock::now();
          sides[s]();
          took += std::chrono::steady_clock::now() - start;
        }
      } else {
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) sides[s]();
        took = std::chrono::steady_clock::now() - start;
      }
      local[s * rounds + r] = std::chrono::duration<double>(took).count() / iters;
    }
  }
  MPI_Allreduce(local.data(), global.data(), static_cast<int>(global.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::vector<std::vector<double>> result(nsides);
  for (size_t s = 0; s < nsides; ++s)
    result[s].assign(global.begin() + s * rounds, global.begin() + (s + 1) * rounds);
  return result;
}

void touchLines(void* data, size_t bytes) {
  auto* p = static_cast<volatile unsigned char*>(data);
  auto rewrite = [p](size_t i) {
    const unsigned char held = p[i];
    p[i] = held;
  };
  for (size_t i = 0; i < bytes; i += 64) rewrite(i);
  if (bytes > 0) rewrite(bytes - 1);
}

void fillMeasure(Measure& m, const std::vector<double>& roundSec, double bytes, double busFactor) {
  m.ran = true;
  for (double sec : roundSec) m.roundUs.push_back(sec * 1e6);
  Spread spread = summarize(m.roundUs);
  m.timeUs = spread.median;
  m.minUs = spread.min;
  m.maxUs = spread.max;
  m.algBw = m.timeUs > 0 ? bytes / (m.timeUs * 1e-6) / 1e9 : 0;
  m.busBw = m.algBw * busFactor;
}

long long sumOverRanks(long long local) {
  long long total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

void peerCall(Peer& peer, const CollDesc& desc, const CallArgs& args, int rank, PeerStep step) {
  try {
    switch (step) {
      case PeerStep::kCall:
        return peer.call(desc, args);
      case PeerStep::kCallInPlace:
        return peer.callInPlace(desc, args);
      case PeerStep::kPrepare:
        return peer.prepare(desc, args);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commperf: rank %d: %s: %s\n", rank, peer.library(), e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

void weftCheck(weftResult_t result, const char* what, int rank) {
  if (result == weftSuccess) return;
  const char* message = weftGetLastErrorMessage();
  std::fprintf(stderr, "commperf: rank %d: %s failed: %s (%d): %s\n", rank, what, weftGetErrorString(result),
               static_cast<int>(result), message && *message ? message : "(no message)");
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

namespace {

double timeRatio(const Measure& peer, const Measure& weft) {
  return peer.ran && weft.ran && weft.timeUs > 0 ? peer.timeUs / weft.timeUs : 0;
}

}  // namespace

double Row::ratio(size_t peer) const { return peer < peers.size() ? timeRatio(peers[peer], outOfPlace) : 0; }

double Row::inPlaceRatio(size_t peer) const {
  return peer < peersInPlace.size() ? timeRatio(peersInPlace[peer], inPlace) : 0;
}

Bench::Bench(weftComm_t comm, int rank, int nranks, const Options& options, size_t capacityBytes,
             const Peers& peers)
    : comm_(comm), rank_(rank), nranks_(nranks), options_(options), capacity_(capacityBytes + 64), peers_(peers) {
  send_ = allocateBuffer(capacity_);
  recv_ = allocateBuffer(capacity_);
}

Bench::~Bench() {
  freeBuffer(send_);
  freeBuffer(recv_);
}

Row Bench::run(const CollDesc& desc, size_t bytes, weftDataType_t type, std::optional<weftRedOp_t> op) {
  size_t elemSize = typeSize(type);
  CollCounts counts = desc.counts(bytes / elemSize, rank_, nranks_);
  Row row{&desc,
          std::max(counts.sendCount, counts.recvCount) * elemSize,
          counts.paramCount,
          type,
          desc.hasOp ? op : std::nullopt,
          desc.hasRoot ? options_.root : -1,
          {},
          {},
          {},
          {}};
  if (!peers_.empty()) {
    measureWithPeers(row, counts);
    return row;
  }
  measureWeft(row, counts, false, row.outOfPlace);
  if (desc.hasInPlace) measureWeft(row, counts, true, row.inPlace);
  return row;
}

std::vector<Measure> Bench::runOnComms(const CollDesc& desc, size_t bytes, weftDataType_t type,
                                       std::optional<weftRedOp_t> op, const std::vector<weftComm_t>& comms) {
  const CollCounts counts = desc.counts(bytes / typeSize(type), rank_, nranks_);
  const Row row{&desc, bytes, counts.paramCount, type, desc.hasOp ? op : std::nullopt, -1, {}, {}, {}, {}};
  std::vector<CallArgs> args(comms.size(), argsFor(row, counts, false));
  std::vector<Side> sides;
  for (size_t c = 0; c < comms.size(); ++c) {
    args[c].comm = comms[c];
    sides.emplace_back([&, c] { weftCheck(desc.call(args[c]), desc.name, rank_); });
  }
  CheckContext ctx{&desc, row.type, row.op, rank_, nranks_, options_.root, counts};
  fillInput(ctx, send_, counts.sendCount);
  // Weft alone: no other library's threads to let go idle, and a pause would put every rank to sleep before
  // each turn (3 to 5 us more per call at 8 B over tcp, measured).
  const auto times = timeRounds(sides, options_, false);
  std::vector<Measure> measures(comms.size());
  for (size_t c = 0; c < comms.size(); ++c) {
    fillMeasure(measures[c], times[c], algBytes(desc, row.count, typeSize(type), nranks_),
                desc.busFactor(nranks_));
    if (!options_.check) continue;
    fillInput(ctx, send_, counts.sendCount);
    poisonOutput(ctx, recv_, counts.recvCount);
    sides[c]();
    measures[c].wrong = sumOverRanks(static_cast<long long>(countWrong(ctx, recv_)));
  }
  return measures;
}

CallArgs Bench::argsFor(const Row& row, const CollCounts& counts, bool inPlace) {
  size_t elemSize = typeSize(row.type);
  unsigned char* sendptr = inPlace ? recv_ + counts.sendInplaceOffset * elemSize : send_;
  unsigned char* recvptr = inPlace ? recv_ + counts.recvInplaceOffset * elemSize : recv_;
  return CallArgs{sendptr,       recvptr, row.count, row.type, row.op.value_or(weftSum),
                  options_.root, rank_,   nranks_,   comm_};
}

void Bench::measureWeft(const Row& row, const CollCounts& counts, bool inPlace, Measure& m) {
  const CollDesc& desc = *row.desc;
  CallArgs args = argsFor(row, counts, inPlace);
  CheckContext ctx{&desc, row.type, row.op, rank_, nranks_, options_.root, counts};
  fillInput(ctx, const_cast<void*>(args.sendbuff), counts.sendCount);
  std::vector<Side> sides{[&] { weftCheck(desc.call(args), desc.name, rank_); }};
  const size_t inputBytes = counts.sendCount * typeSize(row.type);
  std::function<void(size_t)> touch;
  if (options_.touchInput) touch = [&](size_t) { touchLines(const_cast<void*>(args.sendbuff), inputBytes); };
  auto times = timeRounds(sides, options_, true, touch);
  double bytes = algBytes(desc, row.count, typeSize(row.type), nranks_);
  fillMeasure(m, times[0], bytes, desc.busFactor(nranks_));
  if (options_.check) {
    fillInput(ctx, const_cast<void*>(args.sendbuff), counts.sendCount);
    if (!inPlace) poisonOutput(ctx, args.recvbuff, counts.recvCount);
    weftCheck(desc.call(args), desc.name, rank_);
    m.wrong = sumOverRanks(static_cast<long long>(countWrong(ctx, args.recvbuff)));
  }
}

long long Bench::checkPeer(Peer& peer, const CollDesc& desc, const Row& row, const CollCounts& counts,
                           bool inPlace) {
  CallArgs args = argsFor(row, counts, inPlace);
  CheckContext ctx{&desc, row.type, row.op, rank_, nranks_, options_.root, counts};
  fillInput(ctx, const_cast<void*>(args.sendbuff), counts.sendCount);
  if (!inPlace) poisonOutput(ctx, args.recvbuff, counts.recvCount);
  peerCall(peer, desc, args, rank_, inPlace ? PeerStep::kCallInPlace : PeerStep::kCall);
  bool checks = peer.checksRank(desc, rank_, options_.root);
  const void* result = inPlace ? peer.inPlaceResult(desc, args) : args.recvbuff;
  return sumOverRanks(checks ? static_cast<long long>(countWrong(ctx, result)) : 0);
}

void Bench::measureWithPeers(Row& row, const CollCounts& counts) {
  const CollDesc& desc = *row.desc;
  CallArgs args = argsFor(row, counts, false);
  CheckContext ctx{&desc, row.type, row.op, rank_, nranks_, options_.root, counts};
  fillInput(ctx, const_cast<void*>(args.sendbuff), counts.sendCount);

  // Side 0 is Weft; each peer that can run this shape adds one. Every rank reaches the same verdicts: they
  // depend only on the collective, type and op.
  std::vector<Side> sides{[&] { weftCheck(desc.call(args), desc.name, rank_); }};
  std::vector<size_t> sideOf(peers_.size(), 0);  // 0: the peer skips this shape
  row.peers.resize(peers_.size());
  for (size_t p = 0; p < peers_.size(); ++p) {
    Peer* peer = peers_[p].get();
    row.peers[p].skipped = peer->unsupported(desc, row.type, row.op);
    if (!row.peers[p].skipped.empty()) continue;
    peerCall(*peer, desc, args, rank_, PeerStep::kPrepare);
    sides.emplace_back([this, &desc, &args, peer] { peerCall(*peer, desc, args, rank_); });
    sideOf[p] = sides.size() - 1;
  }
  // The in-place forms (--peer_in_place), Weft's and each peer's that has one, take their turns too; their
  // input is whatever the last turn left: only timed here. Sides from inPlaceFrom on run on inPlaceArgs, Weft's
  // first.
  const CallArgs inPlaceArgs = argsFor(row, counts, true);
  const bool inPlace = options_.peerInPlace && desc.hasInPlace;
  const size_t inPlaceFrom = sides.size();
  std::vector<size_t> inPlaceSideOf(peers_.size(), 0);
  if (inPlace) {
    sides.emplace_back([&] { weftCheck(desc.call(inPlaceArgs), desc.name, rank_); });
    row.peersInPlace.resize(peers_.size());
    for (size_t p = 0; p < peers_.size(); ++p) {
      Peer* peer = peers_[p].get();
      if (!sideOf[p] || !peer->hasInPlace(desc)) continue;
      sides.emplace_back([this, &desc, &inPlaceArgs, peer] {
        peerCall(*peer, desc, inPlaceArgs, rank_, PeerStep::kCallInPlace);
      });
      inPlaceSideOf[p] = sides.size() - 1;
    }
  }
  const size_t inputBytes = counts.sendCount * typeSize(row.type);
  std::function<void(size_t)> touch;
  if (options_.touchInput) {
    touch = [&](size_t side) {
      const CallArgs& a = side >= inPlaceFrom ? inPlaceArgs : args;
      touchLines(const_cast<void*>(a.sendbuff), inputBytes);
    };
  }
  auto times = timeRounds(sides, options_, true, touch);
  double bytes = algBytes(desc, row.count, typeSize(row.type), nranks_);
  fillMeasure(row.outOfPlace, times[0], bytes, desc.busFactor(nranks_));
  for (size_t p = 0; p < peers_.size(); ++p) {
    if (sideOf[p]) fillMeasure(row.peers[p], times[sideOf[p]], bytes, desc.busFactor(nranks_));
    if (inPlaceSideOf[p])
      fillMeasure(row.peersInPlace[p], times[inPlaceSideOf[p]], bytes, desc.busFactor(nranks_));
  }
  if (inPlace) fillMeasure(row.inPlace, times[inPlaceFrom], bytes, desc.busFactor(nranks_));

  // The buffers are shared: each library's check starts from fresh inputs and a poisoned output.
  if (options_.check) {
    fillInput(ctx, const_cast<void*>(args.sendbuff), counts.sendCount);
    poisonOutput(ctx, args.recvbuff, counts.recvCount);
    weftCheck(desc.call(args), desc.name, rank_);
    row.outOfPlace.wrong = sumOverRanks(static_cast<long long>(countWrong(ctx, args.recvbuff)));
    for (size_t p = 0; p < peers_.size(); ++p) {
      if (sideOf[p]) row.peers[p].wrong = checkPeer(*peers_[p], desc, row, counts, false);
      if (inPlaceSideOf[p]) row.peersInPlace[p].wrong = checkPeer(*peers_[p], desc, row, counts, true);
    }
    if (inPlace) {
      fillInput(ctx, const_cast<void*>(inPlaceArgs.sendbuff), counts.sendCount);
      weftCheck(desc.call(inPlaceArgs), desc.name, rank_);
      row.inPlace.wrong = sumOverRanks(static_cast<long long>(countWrong(ctx, inPlaceArgs.recvbuff)));
    }
  }
  for (size_t p = 0; p < peers_.size(); ++p)
    if (sideOf[p]) peers_[p]->release();
}

}  // namespace commperf
