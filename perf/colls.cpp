#include "colls.h"

#include <algorithm>

namespace commperf {

namespace {

// ---- sizes (nccl-tests' *GetCollByteCount, without its 16-byte alignment of the per-rank block) ----

CollCounts sameCounts(size_t count, int, int) { return {count, count, count, 0, 0}; }

CollCounts allGatherCounts(size_t count, int rank, int nranks) {
  size_t base = count / static_cast<size_t>(nranks);
  return {base, base * nranks, base, base * static_cast<size_t>(rank), 0};
}

CollCounts reduceScatterCounts(size_t count, int rank, int nranks) {
  size_t base = count / static_cast<size_t>(nranks);
  return {base * nranks, base, base, 0, base * static_cast<size_t>(rank)};
}

CollCounts allToAllCounts(size_t count, int, int nranks) {
  size_t base = count / static_cast<size_t>(nranks);
  return {base * nranks, base * nranks, base, 0, 0};
}

// ---- bus bandwidth factors (nccl-tests PERFORMANCE.md) ----

double allReduceFactor(int n) { return 2.0 * (n - 1) / n; }
double ringFactor(int n) { return static_cast<double>(n - 1) / n; }
double unitFactor(int) { return 1.0; }

// ---- calls ----

weftResult_t callAllReduce(const CallArgs& a) {
  return weftAllReduce(a.sendbuff, a.recvbuff, a.count, a.type, a.op, a.comm, nullptr);
}
weftResult_t callAllGather(const CallArgs& a) {
  return weftAllGather(a.sendbuff, a.recvbuff, a.count, a.type, a.comm, nullptr);
}
weftResult_t callReduceScatter(const CallArgs& a) {
  return weftReduceScatter(a.sendbuff, a.recvbuff, a.count, a.type, a.op, a.comm, nullptr);
}
weftResult_t callAllToAll(const CallArgs& a) {
  return weftAllToAll(a.sendbuff, a.recvbuff, a.count, a.type, a.comm, nullptr);
}
weftResult_t callBroadcast(const CallArgs& a) {
  return weftBroadcast(a.sendbuff, a.recvbuff, a.count, a.type, a.root, a.comm, nullptr);
}
weftResult_t callReduce(const CallArgs& a) {
  return weftReduce(a.sendbuff, a.recvbuff, a.count, a.type, a.op, a.root, a.comm, nullptr);
}
weftResult_t callSendRecv(const CallArgs& a) {
  int next = (a.rank + 1) % a.nranks;
  int prev = (a.rank + a.nranks - 1) % a.nranks;
  weftResult_t result = weftGroupStart();
  if (result != weftSuccess) return result;
  weftResult_t sendResult = weftSend(a.sendbuff, a.count, a.type, next, a.comm, nullptr);
  weftResult_t recvResult =
      sendResult == weftSuccess ? weftRecv(a.recvbuff, a.count, a.type, prev, a.comm, nullptr) : weftSuccess;
  // Always close the group; report the first failure (its message is the one left to read).
  if (sendResult != weftSuccess) {
    weftGroupEnd();
    return sendResult;
  }
  if (recvResult != weftSuccess) {
    weftGroupEnd();
    return recvResult;
  }
  return weftGroupEnd();
}

// ---- who checks, and where each output element comes from ----

bool everyRank(int, int) { return true; }
bool rootOnly(int rank, int root) { return rank == root; }

Source reducedSame(size_t j, size_t, int, int, int) { return {true, 0, j}; }
Source fromRoot(size_t j, size_t, int, int, int root) { return {false, root, j}; }
Source gathered(size_t j, size_t base, int, int, int) { return {false, static_cast<int>(j / base), j % base}; }
Source scattered(size_t j, size_t base, int rank, int, int) {
  return {true, 0, static_cast<size_t>(rank) * base + j};
}
Source exchanged(size_t j, size_t base, int rank, int, int) {
  return {false, static_cast<int>(j / base), static_cast<size_t>(rank) * base + j % base};
}
Source fromPrevious(size_t j, size_t, int rank, int nranks, int) {
  return {false, (rank + nranks - 1) % nranks, j};
}

constexpr CollDesc kColls[] = {
    {"allreduce", CollKind::kAllReduce, true, false, true, sameCounts, false, allReduceFactor, callAllReduce,
     everyRank, reducedSame},
    {"allgather", CollKind::kAllGather, false, false, true, allGatherCounts, true, ringFactor, callAllGather,
     everyRank, gathered},
    {"reducescatter", CollKind::kReduceScatter, true, false, true, reduceScatterCounts, true, ringFactor,
     callReduceScatter, everyRank, scattered},
    {"alltoall", CollKind::kAllToAll, false, false, false, allToAllCounts, true, ringFactor, callAllToAll,
     everyRank, exchanged},
    {"broadcast", CollKind::kBroadcast, false, true, true, sameCounts, false, unitFactor, callBroadcast, everyRank,
     fromRoot},
    {"reduce", CollKind::kReduce, true, true, true, sameCounts, false, unitFactor, callReduce, rootOnly,
     reducedSame},
    {"sendrecv", CollKind::kSendRecv, false, false, false, sameCounts, false, unitFactor, callSendRecv, everyRank,
     fromPrevious},
};

}  // namespace

std::span<const CollDesc> allColls() { return kColls; }

const CollDesc* findColl(std::string_view name) {
  auto it = std::find_if(std::begin(kColls), std::end(kColls), [&](const CollDesc& d) { return name == d.name; });
  return it == std::end(kColls) ? nullptr : &*it;
}

double algBytes(const CollDesc& desc, size_t paramCount, size_t elemSize, int nranks) {
  double bytes = static_cast<double>(paramCount) * static_cast<double>(elemSize);
  return desc.algScalesWithRanks ? bytes * nranks : bytes;
}

}  // namespace commperf
