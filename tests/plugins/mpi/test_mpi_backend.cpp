// test_mpi_backend: the mpi plugin's mapping of Weft's types and ops onto MPI, launched with mpirun and
// WEFT_PLUGINS=mpi (run_checked.py also checks from the log that MPI really ran the collectives).
//
// Every result is compared with a sequential reference computed here, independently of Weft and MPI:
// integers in wrapped unsigned arithmetic (avg: the wrapped sum, then C's truncating division), float16
// and bfloat16 in double and rounded once (exact inputs, so every order of combining gives the same
// bits), and float16 with inexact inputs within a bound on the rounding error. Covered: fp16/bf16 sum,
// prod, max and min, avg on every integer type, every collective in place and out of place, split
// communicators (created by MPI_Comm_create_group over their ranks only), and operations cut into
// pieces (run with WEFT_MPI_MAX_CALL_ELEMENTS small, the pieces are many; --huge: a count above INT_MAX).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <weft/weft.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "halfconv.h"  // tests/collectives: conversions written for the tests, not the library's

namespace {

using colltest::bfloat16ToFloat;
using colltest::floatToBfloat16;
using colltest::floatToHalf;
using colltest::halfToFloat;

int gRank = 0;
int gSize = 1;
long gFailures = 0;
long gChecks = 0;

void check(bool ok, const std::string& what) {
  ++gChecks;
  if (!ok && ++gFailures <= 20) std::fprintf(stderr, "[rank %d] FAIL %s\n", gRank, what.c_str());
}

void expectOk(weftResult_t r, const char* call) {
  if (r != weftSuccess) {
    std::fprintf(stderr, "[rank %d] %s: %s (%s)\n", gRank, call, weftGetErrorString(r), weftGetLastErrorMessage());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

const char* opName(weftRedOp_t op) {
  static const char* names[] = {"sum", "prod", "max", "min", "avg"};
  return names[op];
}

// ---- integers: wrapped arithmetic in uint64, cut to the type's width -----------------------------------

template <typename T>
T wrapCombine(T a, T b, weftRedOp_t op) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case weftSum:
    case weftAvg:
      return static_cast<T>(static_cast<U>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)));
    case weftProd:
      return static_cast<T>(static_cast<U>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)));
    case weftMax:
      return a > b ? a : b;
    default:
      return a < b ? a : b;
  }
}

// Rank r's element i: values near the type's ends, so that sums and products wrap.
template <typename T>
T intInput(int r, size_t i) {
  const uint64_t mix = (static_cast<uint64_t>(i) * 2654435761ULL) ^ (static_cast<uint64_t>(r + 1) * 40503ULL);
  if constexpr (sizeof(T) == 1) return static_cast<T>(100 + static_cast<int>(mix % 57));
  return static_cast<T>(std::numeric_limits<T>::max() - static_cast<T>(mix % 1000));
}

template <typename T>
std::vector<T> intReference(size_t count, weftRedOp_t op, int ranks) {
  std::vector<T> ref(count);
  for (size_t i = 0; i < count; ++i) {
    T acc = intInput<T>(0, i);
    for (int r = 1; r < ranks; ++r) acc = wrapCombine(acc, intInput<T>(r, i), op);
    if (op == weftAvg) {
      using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      acc = static_cast<T>(static_cast<Wide>(acc) / static_cast<Wide>(ranks));
    }
    ref[i] = acc;
  }
  return ref;
}

template <typename T>
void intAllReduce(weftComm_t comm, weftDataType_t type, const char* typeName, weftRedOp_t op, bool inPlace) {
  const size_t count = 1031;
  std::vector<T> send(count), recv(count, T{});
  for (size_t i = 0; i < count; ++i) send[i] = intInput<T>(gRank, i);
  T* out = inPlace ? send.data() : recv.data();
  expectOk(weftAllReduce(send.data(), out, count, type, op, comm, nullptr), "weftAllReduce");
  const std::vector<T> ref = intReference<T>(count, op, gSize);
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) bad += out[i] != ref[i];
  check(bad == 0, std::string("AllReduce ") + typeName + " " + opName(op) + (inPlace ? " in place" : "") + ": " +
                      std::to_string(bad) + " wrong elements");
}

// ---- float16 / bfloat16 ------------------------------------------------------------------------------

struct Half {
  weftDataType_t type;
  const char* name;
  uint16_t (*encode)(float);
  float (*decode)(uint16_t);
};
const Half kHalves[] = {{weftFloat16, "float16", floatToHalf, halfToFloat},
                        {weftBfloat16, "bfloat16", floatToBfloat16, bfloat16ToFloat}};

// Exact inputs: small multiples of 1/4 (sums stay exact in both formats) and powers of two near one
// (products stay exact), so the reference is exact in double whatever order MPI combines in.
float exactInput(int r, size_t i, weftRedOp_t op) {
  if (op == weftProd) {
    static const float factors[] = {0.5f, 1.0f, 2.0f, -1.0f, 0.25f, 4.0f, -2.0f};
    return factors[(i + static_cast<size_t>(r) * 3) % 7];
  }
  return static_cast<float>(static_cast<int>((i * 7 + static_cast<size_t>(r) * 13) % 61) - 30) * 0.25f;
}

double combine(double a, double b, weftRedOp_t op) {
  switch (op) {
    case weftSum:
    case weftAvg:
      return a + b;
    case weftProd:
      return a * b;
    case weftMax:
      return a > b ? a : b;
    default:
      return a < b ? a : b;
  }
}

// The exact result in double, rounded once to the half type (what Weft's float32 combining gives too).
std::vector<uint16_t> halfReference(const Half& h, size_t count, weftRedOp_t op, int ranks, int firstRank,
                                    int rankStep) {
  std::vector<uint16_t> ref(count);
  for (size_t i = 0; i < count; ++i) {
    double acc = exactInput(firstRank, i, op);
    for (int k = 1; k < ranks; ++k) acc = combine(acc, exactInput(firstRank + k * rankStep, i, op), op);
    if (op == weftAvg) acc /= ranks;
    ref[i] = h.encode(static_cast<float>(acc));
  }
  return ref;
}

void halfAllReduce(weftComm_t comm, const Half& h, weftRedOp_t op, bool inPlace) {
  const size_t count = 4099;
  std::vector<uint16_t> send(count), recv(count, 0);
  for (size_t i = 0; i < count; ++i) send[i] = h.encode(exactInput(gRank, i, op));
  uint16_t* out = inPlace ? send.data() : recv.data();
  expectOk(weftAllReduce(send.data(), out, count, h.type, op, comm, nullptr), "weftAllReduce");
  const std::vector<uint16_t> ref = halfReference(h, count, op, gSize, 0, 1);
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) bad += out[i] != ref[i];
  check(bad == 0, std::string("AllReduce ") + h.name + " " + opName(op) + (inPlace ? " in place" : "") + ": " +
                      std::to_string(bad) + " wrong elements");
}

// Inexact inputs: every step of the reduction (one combine of two partial results) rounds once to the
// half type, so the result may differ from the exact sum by half a unit in the last place of each of
// the (ranks - 1) partial sums, each at most the sum of the magnitudes.
void halfInexactSum(weftComm_t comm, const Half& h) {
  const size_t count = 2053;
  std::vector<uint16_t> data(count);
  auto input = [](int r, size_t i) { return std::sin(static_cast<double>(i) * 0.37 + r) * 3.0; };
  for (size_t i = 0; i < count; ++i) data[i] = h.encode(static_cast<float>(input(gRank, i)));
  expectOk(weftAllReduce(data.data(), data.data(), count, h.type, weftSum, comm, nullptr), "weftAllReduce");
  const double unit = h.type == weftFloat16 ? 0x1p-10 : 0x1p-7;  // relative spacing of the type
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) {
    double exact = 0;
    double magnitude = 0;
    for (int r = 0; r < gSize; ++r) {
      double x = h.decode(h.encode(static_cast<float>(input(r, i))));
      exact += x;
      magnitude += std::fabs(x);
    }
    const double tolerance = 0.5 * unit * magnitude * gSize + 1e-7;
    bad += std::fabs(h.decode(data[i]) - exact) > tolerance;
  }
  check(bad == 0, std::string("AllReduce ") + h.name + " sum of inexact values: " + std::to_string(bad) +
                      " elements outside the rounding bound");
}

// ---- every collective, in place and out of place (int32 sum: exact and easy to reference) ------------

int32_t value(int r, size_t i) { return static_cast<int32_t>(i * 31 + static_cast<size_t>(r) * 1000003); }

void collectives(weftComm_t comm, int rank, int size, const std::string& label, size_t count) {
  // AllGather
  for (bool inPlace : {false, true}) {
    std::vector<int32_t> all(count * size, -1), mine(count);
    for (size_t i = 0; i < count; ++i) mine[i] = value(rank, i);
    const int32_t* send = mine.data();
    if (inPlace) {
      std::copy(mine.begin(), mine.end(), all.begin() + static_cast<long>(count * rank));
      send = all.data() + count * rank;
    }
    expectOk(weftAllGather(send, all.data(), count, weftInt32, comm, nullptr), "weftAllGather");
    size_t bad = 0;
    for (int r = 0; r < size; ++r) {
      for (size_t i = 0; i < count; ++i) bad += all[count * r + i] != value(r, i);
    }
    check(bad == 0, label + " AllGather" + (inPlace ? " in place" : "") + ": " + std::to_string(bad) + " wrong");
  }
  // ReduceScatter (sum of value(r, block*count + i) over r)
  for (bool inPlace : {false, true}) {
    std::vector<int32_t> send(count * size), recv(count, -1);
    for (size_t i = 0; i < count * size; ++i) send[i] = value(rank, i);
    int32_t* out = inPlace ? send.data() + count * rank : recv.data();
    expectOk(weftReduceScatter(send.data(), out, count, weftInt32, weftSum, comm, nullptr), "weftReduceScatter");
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) {
      uint32_t sum = 0;
      for (int r = 0; r < size; ++r) sum += static_cast<uint32_t>(value(r, count * rank + i));
      bad += out[i] != static_cast<int32_t>(sum);
    }
    check(bad == 0,
          label + " ReduceScatter" + (inPlace ? " in place" : "") + ": " + std::to_string(bad) + " wrong");
  }
  // AllToAll: block p of rank r's input goes to rank p's block r
  for (bool inPlace : {false, true}) {
    std::vector<int32_t> send(count * size), recv(count * size, -1);
    for (size_t i = 0; i < count * size; ++i) send[i] = value(rank, i);
    int32_t* out = inPlace ? send.data() : recv.data();
    expectOk(weftAllToAll(send.data(), out, count, weftInt32, comm, nullptr), "weftAllToAll");
    size_t bad = 0;
    for (int r = 0; r < size; ++r) {
      for (size_t i = 0; i < count; ++i) bad += out[count * r + i] != value(r, count * rank + i);
    }
    check(bad == 0, label + " AllToAll" + (inPlace ? " in place" : "") + ": " + std::to_string(bad) + " wrong");
  }
  // Broadcast and Reduce from the last rank
  const int root = size - 1;
  for (bool inPlace : {false, true}) {
    std::vector<int32_t> send(count), recv(count, -1);
    for (size_t i = 0; i < count; ++i) send[i] = rank == root ? value(root, i) : -7;
    int32_t* out = inPlace ? send.data() : recv.data();
    expectOk(weftBroadcast(send.data(), out, count, weftInt32, root, comm, nullptr), "weftBroadcast");
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) bad += out[i] != value(root, i);
    check(bad == 0, label + " Broadcast" + (inPlace ? " in place" : "") + ": " + std::to_string(bad) + " wrong");
  }
  for (bool inPlace : {false, true}) {
    std::vector<int32_t> send(count), recv(count, -1);
    for (size_t i = 0; i < count; ++i) send[i] = value(rank, i);
    int32_t* out = inPlace ? send.data() : recv.data();
    expectOk(weftReduce(send.data(), out, count, weftInt32, weftMax, root, comm, nullptr), "weftReduce");
    if (rank != root) continue;
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) {
      int32_t best = value(0, i);
      for (int r = 1; r < size; ++r) best = std::max(best, value(r, i));
      bad += out[i] != best;
    }
    check(bad == 0, label + " Reduce max" + (inPlace ? " in place" : "") + ": " + std::to_string(bad) + " wrong");
  }
  // AllReduce sum, both ways
  for (bool inPlace : {false, true}) {
    std::vector<int32_t> send(count), recv(count, -1);
    for (size_t i = 0; i < count; ++i) send[i] = value(rank, i);
    int32_t* out = inPlace ? send.data() : recv.data();
    expectOk(weftAllReduce(send.data(), out, count, weftInt32, weftSum, comm, nullptr), "weftAllReduce");
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) {
      uint32_t sum = 0;
      for (int r = 0; r < size; ++r) sum += static_cast<uint32_t>(value(r, i));
      bad += out[i] != static_cast<int32_t>(sum);
    }
    check(bad == 0, label + " AllReduce" + (inPlace ? " in place" : "") + ": " + std::to_string(bad) + " wrong");
  }
  expectOk(weftBarrier(comm, nullptr), "weftBarrier");
}

// ---- split communicators: MPI_Comm_create_group over a subset, in Weft's (reversed) rank order ------

void splitCommunicators(weftComm_t world) {
  weftComm_t sub = nullptr;
  const int color = gRank % 2;
  expectOk(weftCommSplit(world, color, -gRank, &sub), "weftCommSplit");
  int subRank = -1;
  int subSize = 0;
  expectOk(weftCommUserRank(sub, &subRank), "weftCommUserRank");
  expectOk(weftCommCount(sub, &subSize), "weftCommCount");
  // Sub-rank k is world rank (highest of this color) - 2k.
  const int highest = (gSize - 1 - color) / 2 * 2 + color;
  check(subRank == (highest - gRank) / 2, "split: sub-communicator rank");
  collectives(sub, subRank, subSize, "split(color=" + std::to_string(color) + ")", 777);
  // fp16 on the sub-communicator: reference over its world ranks, from the highest down.
  const Half& h = kHalves[0];
  const size_t count = 515;
  std::vector<uint16_t> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = h.encode(exactInput(gRank, i, weftSum));
  expectOk(weftAllReduce(data.data(), data.data(), count, h.type, weftAvg, sub, nullptr), "weftAllReduce");
  const std::vector<uint16_t> ref = halfReference(h, count, weftAvg, subSize, highest, -2);
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) bad += data[i] != ref[i];
  check(bad == 0, "split float16 avg: " + std::to_string(bad) + " wrong");
  expectOk(weftCommDestroy(sub), "weftCommDestroy");
}

// ---- a count above INT_MAX: one int8 AllReduce in place, cut into pieces by the plugin ---------------

// ThreadSanitizer's shadow memory multiplies what the ranks touch: this test reached 12 GiB of RSS per rank
// in a TSan build (and the kernel's OOM killer) where it needs about 4 GiB in others.
#if defined(__SANITIZE_THREAD__)
constexpr size_t kMemoryFactor = 4;
#else
constexpr size_t kMemoryFactor = 1;
#endif

bool enoughMemory(size_t bytesPerRank) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024 > bytesPerRank * static_cast<size_t>(gSize) * 2 * kMemoryFactor;
  }
  return false;
}

int hugeCount(weftComm_t comm) {
  const size_t count = static_cast<size_t>(INT_MAX) + 4099;
  int ok = enoughMemory(count) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (ok == 0) {
    if (gRank == 0) std::printf("SKIP: not enough free memory for %zu bytes per rank\n", count);
    return 77;
  }
  std::vector<int8_t> data(count);
  auto input = [](int r, size_t i) { return static_cast<int8_t>((i * 7 + static_cast<size_t>(r) * 3) & 0x3f); };
  for (size_t i = 0; i < count; ++i) data[i] = input(gRank, i);
  expectOk(weftAllReduce(data.data(), data.data(), count, weftInt8, weftSum, comm, nullptr), "weftAllReduce");
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) {
    uint8_t sum = 0;
    for (int r = 0; r < gSize; ++r) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(input(r, i)));
    bad += data[i] != static_cast<int8_t>(sum);
  }
  check(bad == 0, "AllReduce int8 of " + std::to_string(count) + " elements: " + std::to_string(bad) + " wrong");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  const bool huge = argc > 1 && std::strcmp(argv[1], "--huge") == 0;

  weftUniqueId id;
  if (gRank == 0) expectOk(weftGetUniqueId(&id), "weftGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  weftComm_t comm = nullptr;
  expectOk(weftCommInitRank(&comm, gSize, id, gRank), "weftCommInitRank");

  int status = 0;
  if (huge) {
    status = hugeCount(comm);
  } else {
    for (const Half& h : kHalves) {
      for (weftRedOp_t op : {weftSum, weftProd, weftMax, weftMin, weftAvg}) {
        halfAllReduce(comm, h, op, false);
        halfAllReduce(comm, h, op, true);
      }
      halfInexactSum(comm, h);
    }
    for (weftRedOp_t op : {weftAvg, weftSum, weftProd}) {
      intAllReduce<int8_t>(comm, weftInt8, "int8", op, op == weftAvg);
      intAllReduce<uint8_t>(comm, weftUint8, "uint8", op, false);
      intAllReduce<int32_t>(comm, weftInt32, "int32", op, true);
      intAllReduce<uint32_t>(comm, weftUint32, "uint32", op, false);
      intAllReduce<int64_t>(comm, weftInt64, "int64", op, op != weftProd);
      intAllReduce<uint64_t>(comm, weftUint64, "uint64", op, false);
    }
    collectives(comm, gRank, gSize, "world", 1000);
    collectives(comm, gRank, gSize, "world", 10007);  // many pieces under a small WEFT_MPI_MAX_CALL_ELEMENTS
    if (gSize >= 2) splitCommunicators(comm);
  }
  expectOk(weftCommDestroy(comm), "weftCommDestroy");

  long failures = gFailures;
  long checks = gChecks;
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (gRank == 0 && status != 77) {
    std::printf("test_mpi_backend np=%d: %ld checks, %ld failures: %s\n", gSize, checks, failures,
                failures == 0 ? "PASSED" : "FAILED");
  }
  MPI_Finalize();
  if (status == 77) return 77;
  return failures == 0 ? 0 : 1;
}
