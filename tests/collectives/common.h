// Shared vocabulary of the multi-rank correctness test: collectives, type traits, options, tallies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace colltest {

enum class Coll { kAllReduce = 0, kBroadcast, kReduce, kAllGather, kReduceScatter, kAllToAll, kBarrier };
constexpr int kNumColls = 7;
constexpr unsigned collBit(Coll c) { return 1u << static_cast<int>(c); }
constexpr unsigned kAllCollBits = (1u << kNumColls) - 1;

const char* collName(Coll c);
bool parseColl(const std::string& name, Coll* out);
bool isReducing(Coll c);

struct TypeInfo {
  weftDataType_t type;
  const char* name;
  size_t size;
  bool isFloat;
  bool isSigned;
  int bits;
  double eps;  // unit roundoff for floats, 0 for integers
};

inline constexpr TypeInfo kTypeInfos[WEFT_NUM_DATA_TYPES] = {
    {weftInt8, "int8", 1, false, true, 8, 0.0},           {weftUint8, "uint8", 1, false, false, 8, 0.0},
    {weftInt32, "int32", 4, false, true, 32, 0.0},        {weftUint32, "uint32", 4, false, false, 32, 0.0},
    {weftInt64, "int64", 8, false, true, 64, 0.0},        {weftUint64, "uint64", 8, false, false, 64, 0.0},
    {weftFloat16, "float16", 2, true, true, 16, 0x1p-11}, {weftBfloat16, "bfloat16", 2, true, true, 16, 0x1p-8},
    {weftFloat32, "float32", 4, true, true, 32, 0x1p-24}, {weftFloat64, "float64", 8, true, true, 64, 0x1p-53},
};
constexpr const TypeInfo& typeInfo(weftDataType_t type) { return kTypeInfos[static_cast<int>(type)]; }

// Calls f.template operator()<T>() with the type as a compile-time constant (for the per-element loops).
template <typename F>
decltype(auto) withType(weftDataType_t type, F&& f) {
  switch (type) {
    case weftInt8:
      return f.template operator()<weftInt8>();
    case weftUint8:
      return f.template operator()<weftUint8>();
    case weftInt32:
      return f.template operator()<weftInt32>();
    case weftUint32:
      return f.template operator()<weftUint32>();
    case weftInt64:
      return f.template operator()<weftInt64>();
    case weftUint64:
      return f.template operator()<weftUint64>();
    case weftFloat16:
      return f.template operator()<weftFloat16>();
    case weftBfloat16:
      return f.template operator()<weftBfloat16>();
    case weftFloat32:
      return f.template operator()<weftFloat32>();
    case weftFloat64:
      break;
  }
  return f.template operator()<weftFloat64>();
}

extern const weftDataType_t kAllTypes[WEFT_NUM_DATA_TYPES];
extern const weftRedOp_t kAllOps[WEFT_NUM_RED_OPS];
const char* opName(weftRedOp_t op);
bool parseType(const std::string& name, weftDataType_t* out);
bool parseOp(const std::string& name, weftRedOp_t* out);

struct Options {
  std::string section = "all";  // collectives | split | stream | sendrecv | all
  std::vector<size_t> counts = {0, 1, 7, 1000, 1048579};
  bool full = false;       // no restriction of combinations at counts > kFullSweepMaxCount
  bool algoGiven = false;  // --algo: run only this WEFT_ALGO setting ("default" = unset)
  std::string algo;
  unsigned collMask = kAllCollBits;  // --coll filter
  int typeFilter = -1;               // --type filter
  int opFilter = -1;                 // --op filter
  int timeoutSeconds = 540;          // watchdog; 0 disables
  int maxErrorsPrinted = 30;         // per rank
  bool verbose = false;
  std::string hosts;  // --hosts: emulated hosts, "blocks:N" (N consecutive ranks each) or "alternate:N"
};

// Counts up to this are swept over every combination; larger ones over every type x op once.
constexpr size_t kFullSweepMaxCount = 1000;

// Tally of one section on one rank.
struct Report {
  uint64_t calls = 0;          // operations issued and verified
  uint64_t elements = 0;       // result elements compared
  uint64_t failures = 0;       // mismatches, guard or sendbuff violations, wrong metadata
  uint64_t allReduceHash = 0;  // running hash of AllReduce results (must agree across ranks)
};

}  // namespace colltest
