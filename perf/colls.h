// One descriptor per collective: nccl-tests' buffer-size conventions, its bandwidth factors
// (PERFORMANCE.md), where each output element comes from (for the check), and the Weft call.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "weft/weft.h"

namespace commperf {

// Element counts for one size, as nccl-tests' getCollByteCount computes them.
struct CollCounts {
  size_t sendCount = 0;
  size_t recvCount = 0;
  size_t paramCount = 0;         // the count passed to Weft and printed in the count column
  size_t sendInplaceOffset = 0;  // in place: sendbuff = buffer + this, in elements
  size_t recvInplaceOffset = 0;  // in place: recvbuff = buffer + this
};

struct CallArgs {
  const void* sendbuff;
  void* recvbuff;
  size_t count;
  weftDataType_t type;
  weftRedOp_t op;
  int root;
  int rank;
  int nranks;
  weftComm_t comm;
};

// Where recv element j of rank `rank` comes from: input element `index` of rank `rank` (one source), or the
// reduction over all ranks of their input element `index`.
struct Source {
  bool reduced;
  int rank;
  size_t index;
};

// Which collective, for code that maps each one to another library's call (the peers).
enum class CollKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce, kSendRecv };

struct CollDesc {
  const char* name;
  CollKind kind;
  bool hasOp;       // runs once per reduction op
  bool hasRoot;     // uses --root
  bool hasInPlace;  // weft.h defines an in-place form
  CollCounts (*counts)(size_t count, int rank, int nranks);
  bool algScalesWithRanks;  // algbw counts paramCount * nranks elements (allgather, reducescatter, alltoall)
  double (*busFactor)(int nranks);
  weftResult_t (*call)(const CallArgs& args);
  // Whether rank `rank` has a defined result to check (reduce: only the root).
  bool (*checksRank)(int rank, int root);
  Source (*source)(size_t j, size_t paramCount, int rank, int nranks, int root);
};

std::span<const CollDesc> allColls();
const CollDesc* findColl(std::string_view name);

// Bytes counted by algbw for one call: paramCount * elemSize, times nranks for the gathered kinds.
double algBytes(const CollDesc& desc, size_t paramCount, size_t elemSize, int nranks);

}  // namespace commperf
