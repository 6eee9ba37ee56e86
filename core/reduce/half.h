// Portable IEEE binary16 (float16) and bfloat16 <-> float32 conversions.
//
// Widening is exact. Narrowing rounds to nearest, ties to even, like the hardware converters (F16C,
// AVX512-BF16), so the portable and the vector paths of the reduction kernels agree bit for bit.
// NaNs stay NaN: the quiet bit is set and the top payload bits are kept, as VCVTPH2PS/VCVTPS2PH do.
// Nothing here reads MXCSR, so denormals are handled exactly whatever the FTZ/DAZ flags say.
#pragma once

#include <bit>
#include <cstdint>

namespace weft {

constexpr float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) {  // Inf, or NaN (quieted)
    const uint32_t quiet = mantissa != 0 ? 0x400000u : 0u;
    return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mantissa << 13));
  }
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24 is a normal float (or zero), so the product is exact.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  // Rebias the exponent: 127 - 15 = 112.
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

constexpr uint16_t floatToHalf(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // NaN: quiet it, keep the top 9 payload bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  // 65520 (0x477ff000) is halfway between the largest half, 65504, and 2^16; the tie goes to the even
  // neighbour, 2^16, which is Inf. Everything at or above it, Inf included, becomes Inf.
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t result;
  uint32_t remainder;
  uint32_t halfway;
  if (magnitude < 0x38800000u) {  // below 2^-14: a half subnormal or zero
    // The value in units of 2^-24 is m * 2^(e - 126), with m the 24-bit significand, e the biased exponent.
    const uint32_t exponent = magnitude >> 23;
    const uint32_t shift = 126 - exponent;
    if (shift > 24) return sign;  // below 2^-25: rounds to zero (2^-25 itself is a tie to even zero)
    const uint32_t significand = (magnitude & 0x7fffffu) | (exponent != 0 ? 0x800000u : 0u);
    result = significand >> shift;
    remainder = significand & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
  } else {
    // Normal: rebias, drop 13 mantissa bits. A carry out of the mantissa correctly bumps the exponent.
    result = ((magnitude >> 23) - 112) << 10 | ((magnitude >> 13) & 0x3ffu);
    remainder = magnitude & 0x1fffu;
    halfway = 0x1000u;
  }
  if (remainder > halfway || (remainder == halfway && (result & 1u) != 0)) ++result;
  return static_cast<uint16_t>(sign | result);
}

// bfloat16 is the top half of a float32, so widening is a shift. Written without branches so that loops
// over it auto-vectorise.
constexpr float bfloat16ToFloat(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

constexpr uint16_t floatToBfloat16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest even; overflow past the largest finite value
  // carries into the exponent and gives Inf, as it should.
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  // A NaN must not be rounded (its payload could carry into Inf): truncate it and set the quiet bit.
  const uint32_t nan = (bits >> 16) | 0x40u;
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

}  // namespace weft
