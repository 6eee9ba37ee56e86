#include "bench.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <new>

#include "check.h"
#include "types.h"

namespace commperf {

namespace {

constexpr std::align_val_t kAlignment{64};

unsigned char* allocate(size_t bytes) { return static_cast<unsigned char*>(::operator new(bytes, kAlignment)); }

}  // namespace

void weftCheck(weftResult_t result, const char* what, int rank) {
  if (result == weftSuccess) return;
  const char* message = weftGetLastErrorMessage();
  std::fprintf(stderr, "commperf: rank %d: %s failed: %s (%d): %s\n", rank, what, weftGetErrorString(result),
               static_cast<int>(result), message && *message ? message : "(no message)");
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

Bench::Bench(weftComm_t comm, int rank, int nranks, const Options& options, size_t capacityBytes)
    : comm_(comm), rank_(rank), nranks_(nranks), options_(options), capacity_(capacityBytes + 64) {
  send_ = allocate(capacity_);
  recv_ = allocate(capacity_);
}

Bench::~Bench() {
  ::operator delete(send_, kAlignment);
  ::operator delete(recv_, kAlignment);
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
          {}};
  row.outOfPlace = measure(desc, row, counts, false);
  if (desc.hasInPlace) row.inPlace = measure(desc, row, counts, true);
  return row;
}

Measure Bench::measure(const CollDesc& desc, const Row& row, const CollCounts& counts, bool inPlace) {
  size_t elemSize = typeSize(row.type);
  unsigned char* sendptr = inPlace ? recv_ + counts.sendInplaceOffset * elemSize : send_;
  unsigned char* recvptr = inPlace ? recv_ + counts.recvInplaceOffset * elemSize : recv_;
  CallArgs args{sendptr,       recvptr, row.count, row.type, row.op.value_or(weftSum),
                options_.root, rank_,   nranks_,   comm_};
  CheckContext ctx{&desc, row.type, row.op, rank_, nranks_, options_.root, counts};
  const char* what = desc.name;

  fillInput(ctx, sendptr, counts.sendCount);
  for (int i = 0; i < options_.warmupIters; ++i) weftCheck(desc.call(args), what, rank_);

  MPI_Barrier(MPI_COMM_WORLD);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < options_.iters; ++i) weftCheck(desc.call(args), what, rank_);
  auto stop = std::chrono::steady_clock::now();
  double localSec = std::chrono::duration<double>(stop - start).count() / options_.iters;
  double sec = 0;
  MPI_Allreduce(&localSec, &sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  Measure m;
  m.ran = true;
  m.timeUs = sec * 1e6;
  double bytes = algBytes(desc, row.count, elemSize, nranks_);
  m.algBw = sec > 0 ? bytes / sec / 1e9 : 0;
  m.busBw = m.algBw * desc.busFactor(nranks_);

  if (options_.check) {
    fillInput(ctx, sendptr, counts.sendCount);
    if (!inPlace) poisonOutput(ctx, recvptr, counts.recvCount);
    weftCheck(desc.call(args), what, rank_);
    long long localWrong = static_cast<long long>(countWrong(ctx, recvptr));
    MPI_Allreduce(&localWrong, &m.wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  }
  return m;
}

}  // namespace commperf
