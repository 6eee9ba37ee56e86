#include "types.h"

#include <bit>
#include <cmath>

namespace commperf {

namespace {

struct TypeInfo {
  weftDataType_t type;
  const char* name;
  size_t size;
};

constexpr TypeInfo kTypes[] = {
    {weftInt8, "int8", 1},     {weftUint8, "uint8", 1},    {weftInt32, "int32", 4},  {weftUint32, "uint32", 4},
    {weftInt64, "int64", 8},   {weftUint64, "uint64", 8},  {weftFloat16, "half", 2}, {weftBfloat16, "bfloat16", 2},
    {weftFloat32, "float", 4}, {weftFloat64, "double", 8},
};

struct Alias {
  const char* name;
  weftDataType_t type;
};

constexpr Alias kTypeAliases[] = {
    {"float16", weftFloat16}, {"fp16", weftFloat16},    {"bf16", weftBfloat16}, {"float32", weftFloat32},
    {"fp32", weftFloat32},    {"float64", weftFloat64}, {"fp64", weftFloat64},  {"char", weftInt8},
    {"int", weftInt32},       {"uint", weftUint32},
};

constexpr const char* kOpNames[] = {"sum", "prod", "max", "min", "avg"};

}  // namespace

const char* typeName(weftDataType_t type) {
  for (const TypeInfo& info : kTypes)
    if (info.type == type) return info.name;
  return "?";
}

const char* opName(weftRedOp_t op) {
  int index = static_cast<int>(op);
  return index >= 0 && index < WEFT_NUM_RED_OPS ? kOpNames[index] : "?";
}

size_t typeSize(weftDataType_t type) {
  for (const TypeInfo& info : kTypes)
    if (info.type == type) return info.size;
  return 0;
}

std::optional<weftDataType_t> parseType(std::string_view name) {
  for (const TypeInfo& info : kTypes)
    if (name == info.name) return info.type;
  for (const Alias& alias : kTypeAliases)
    if (name == alias.name) return alias.type;
  return std::nullopt;
}

std::optional<weftRedOp_t> parseOp(std::string_view name) {
  for (int i = 0; i < WEFT_NUM_RED_OPS; ++i)
    if (name == kOpNames[i]) return static_cast<weftRedOp_t>(i);
  return std::nullopt;
}

uint16_t floatToHalfBits(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  uint32_t sign = (f >> 16) & 0x8000u;
  uint32_t exponent = (f >> 23) & 0xffu;
  uint32_t mantissa = f & 0x7fffffu;
  if (exponent == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | half);
}

float halfBitsToFloat(uint16_t bits) {
  uint32_t sign = (static_cast<uint32_t>(bits) & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t floatToBfloat16Bits(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((f >> 16) | 0x40u);
  f += 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>(f >> 16);
}

float bfloat16BitsToFloat(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

double typeEpsilon(weftDataType_t type) {
  switch (type) {
    case weftFloat16:
      return std::ldexp(1.0, -10);
    case weftBfloat16:
      return std::ldexp(1.0, -7);
    case weftFloat32:
      return std::ldexp(1.0, -23);
    case weftFloat64:
      return std::ldexp(1.0, -52);
    default:
      return 0.0;
  }
}

bool isFloatType(weftDataType_t type) {
  return type == weftFloat16 || type == weftBfloat16 || type == weftFloat32 || type == weftFloat64;
}

bool isSignedType(weftDataType_t type) {
  return type == weftInt8 || type == weftInt32 || type == weftInt64 || isFloatType(type);
}

}  // namespace commperf
