// Datatype and reduction-op names, element sizes, and the float16/bfloat16 conversions commperf needs to fill
// and check buffers without any compiler extension.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "weft/weft.h"

namespace commperf {

// nccl-tests' spelling of each type ("float" rather than "float32").
const char* typeName(weftDataType_t type);
const char* opName(weftRedOp_t op);
size_t typeSize(weftDataType_t type);

// Accepts every name in the usage text; "all" is handled by the caller.
std::optional<weftDataType_t> parseType(std::string_view name);
std::optional<weftRedOp_t> parseOp(std::string_view name);

// IEEE binary16 and bfloat16 stored as their bit patterns; conversions round to nearest even.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
uint16_t floatToHalfBits(float value);
float halfBitsToFloat(uint16_t bits);
uint16_t floatToBfloat16Bits(float value);
float bfloat16BitsToFloat(uint16_t bits);

// Unit roundoff-ish spacing at 1.0 of each floating type (0 for integers), for tolerances.
double typeEpsilon(weftDataType_t type);
bool isFloatType(weftDataType_t type);
bool isSignedType(weftDataType_t type);

}  // namespace commperf
