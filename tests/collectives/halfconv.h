// IEEE binary16 and bfloat16 conversions written for the test, independent of the library's. Inline: they
// sit in the per-element loops.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace colltest {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even; overflow to infinity; NaN stays NaN.
inline uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return sign | (x > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (x >= 0x477ff000u) return sign | 0x7c00;  // >= 65520 rounds to infinity
  if (x < 0x38800000u) {                       // below 2^-14: subnormal, in units of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(bitsToFloat(x) * 0x1p24f));
  }
  x += 0xc8000fffu + ((x >> 13) & 1u);  // rebias the exponent (15 - 127), round to nearest even
  return sign | static_cast<uint16_t>(x >> 13);
}

inline float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  if (em >= 0x7c00u) return bitsToFloat(sign | 0x7f800000u | ((em & 0x3ffu) << 13));  // inf, NaN
  if (em >= 0x0400u) return bitsToFloat(sign | ((em + ((127 - 15) << 10)) << 13));    // normal
  const float sub = static_cast<float>(em) * 0x1p-24f;                                // subnormal, zero
  return sign ? -sub : sub;
}

inline uint16_t floatToBfloat16(float f) {
  uint32_t bits = floatBits(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float bfloat16ToFloat(uint16_t b) { return bitsToFloat(static_cast<uint32_t>(b) << 16); }

}  // namespace colltest
