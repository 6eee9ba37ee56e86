// Element-wise reduction kernels for every weftDataType_t x weftRedOp_t.
//
// Integers wrap like the C type (computed in unsigned arithmetic). float16 and bfloat16 are widened to
// float32, combined, and rounded to nearest even once per call. weftAvg combines like weftSum: the
// division by the rank count happens once, at the end of a collective, through divideBy().
#pragma once

#include <cstddef>

#include "weft/weft.h"

namespace weft {

// Bytes of one element of each weftDataType_t, in its order (reduce.cpp checks them against the kernels'
// C types). Inline with the two checks below: every call asks them, some several times.
inline constexpr unsigned char kDataTypeBytes[WEFT_NUM_DATA_TYPES] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};

// The enums come through the C ABI, so any int may arrive: compare as int, never trust the enum's range.
inline bool isValidDataType(weftDataType_t type) {
  const int t = static_cast<int>(type);
  return t >= 0 && t < WEFT_NUM_DATA_TYPES;
}
inline bool isValidRedOp(weftRedOp_t op) {
  const int o = static_cast<int>(op);
  return o >= 0 && o < WEFT_NUM_RED_OPS;
}
// Bytes of one element; 0 for an unknown type.
inline size_t dataTypeSize(weftDataType_t type) { return isValidDataType(type) ? kDataTypeBytes[type] : 0; }
const char* dataTypeName(weftDataType_t type);
const char* redOpName(weftRedOp_t op);

// dst[i] = a[i] op b[i] for i < count. dst may alias a or b (exactly, not partially).
void reduce(void* dst, const void* a, const void* b, size_t count, weftDataType_t type, weftRedOp_t op);

// dst[i] = dst[i] op src[i].
inline void reduceInto(void* dst, const void* src, size_t count, weftDataType_t type, weftRedOp_t op) {
  reduce(dst, dst, src, count, type, op);
}

// dst[i] = dst[i] / divisor: float types divide in their accumulation precision and round once;
// integers use C's truncating division.
void divideBy(void* dst, size_t count, weftDataType_t type, int divisor);

}  // namespace weft
