#include "common.h"

#include <cstring>

namespace colltest {

const weftDataType_t kAllTypes[WEFT_NUM_DATA_TYPES] = {weftInt8,    weftUint8,  weftInt32,   weftUint32,
                                                       weftInt64,   weftUint64, weftFloat16, weftBfloat16,
                                                       weftFloat32, weftFloat64};
const weftRedOp_t kAllOps[WEFT_NUM_RED_OPS] = {weftSum, weftProd, weftMax, weftMin, weftAvg};

namespace {

const char* const kCollNames[kNumColls] = {"AllReduce",     "Broadcast", "Reduce", "AllGather",
                                           "ReduceScatter", "AllToAll",  "Barrier"};
const char* const kOpNames[WEFT_NUM_RED_OPS] = {"sum", "prod", "max", "min", "avg"};

bool equalsIgnoreCase(const std::string& a, const char* b) {
  if (a.size() != std::strlen(b)) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

}  // namespace

const char* collName(Coll c) { return kCollNames[static_cast<int>(c)]; }

bool parseColl(const std::string& name, Coll* out) {
  for (int i = 0; i < kNumColls; ++i) {
    if (equalsIgnoreCase(name, kCollNames[i])) {
      *out = static_cast<Coll>(i);
      return true;
    }
  }
  return false;
}

bool isReducing(Coll c) { return c == Coll::kAllReduce || c == Coll::kReduce || c == Coll::kReduceScatter; }

const char* opName(weftRedOp_t op) { return kOpNames[static_cast<int>(op)]; }

bool parseType(const std::string& name, weftDataType_t* out) {
  for (const TypeInfo& info : kTypeInfos) {
    if (equalsIgnoreCase(name, info.name)) {
      *out = info.type;
      return true;
    }
  }
  return false;
}

bool parseOp(const std::string& name, weftRedOp_t* out) {
  for (int i = 0; i < WEFT_NUM_RED_OPS; ++i) {
    if (equalsIgnoreCase(name, kOpNames[i])) {
      *out = static_cast<weftRedOp_t>(i);
      return true;
    }
  }
  return false;
}

}  // namespace colltest
