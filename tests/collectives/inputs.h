// Deterministic inputs: a value per (input identity, element index, type, kind, call salt), so that any
// rank can recompute any other rank's data without communicating. The per-element functions are inline
// templates on the type: the reference evaluates them for every element of every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common.h"
#include "halfconv.h"
#include "weft/weft.h"

namespace colltest {

// Prod gets its own distribution: integers that overflow now and then, floats near 1 that stay finite.
enum class InputKind { kSum, kProd };
inline InputKind kindFor(weftRedOp_t op) { return op == weftProd ? InputKind::kProd : InputKind::kSum; }

// One element. Integers: the bits truncated to the type's width in u. Floats: the value in d.
struct Elem {
  uint64_t u = 0;
  double d = 0.0;
};

inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

constexpr uint64_t widthMask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

constexpr int64_t signExtend(uint64_t u, int bits) {
  if (bits >= 64) return static_cast<int64_t>(u);
  const int shift = 64 - bits;
  return static_cast<int64_t>(u << shift) >> shift;
}

uint64_t inputSeed(uint64_t salt, int identity, weftDataType_t type, InputKind kind);

template <weftDataType_t T>
inline Elem inputValueT(InputKind kind, uint64_t seed, uint64_t index) {
  constexpr TypeInfo info = typeInfo(T);
  const uint64_t h = mix64(seed ^ (index * 0xD6E8FEB86659FD93ull));
  Elem e;
  if constexpr (info.isFloat) {
    // Multiples of 1/4 in [-8, 8]: exact in every float type, and so are sums of a few of them.
    if (kind == InputKind::kProd) {
      e.d = 1.0 + static_cast<double>(static_cast<int>(h % 5) - 2) * 0.125;
    } else {
      e.d = static_cast<double>(static_cast<int>(h % 65) - 32) * 0.25;
    }
  } else {
    constexpr uint64_t mask = widthMask(info.bits);
    const uint64_t r = h >> 8;
    if (kind == InputKind::kProd) {
      if ((h & 31) == 0) {
        e.u = mix64(h) & mask;  // full width: products wrap
      } else if constexpr (info.isSigned) {
        e.u = static_cast<uint64_t>(static_cast<int64_t>(r % 9) - 4) & mask;
      } else {
        e.u = r % 8;
      }
    } else {
      if ((h & 15) == 0) {
        e.u = mix64(h) & mask;  // full width: sums wrap
      } else if constexpr (info.isSigned) {
        e.u = static_cast<uint64_t>(static_cast<int64_t>(r % 33) - 16) & mask;
      } else {
        e.u = r % 33;
      }
    }
  }
  return e;
}

template <weftDataType_t T>
inline void encodeT(void* dst, const Elem& e) {
  if constexpr (T == weftFloat16) {
    const uint16_t h = floatToHalf(static_cast<float>(e.d));  // exact for the test's inputs
    std::memcpy(dst, &h, 2);
  } else if constexpr (T == weftBfloat16) {
    const uint16_t b = floatToBfloat16(static_cast<float>(e.d));
    std::memcpy(dst, &b, 2);
  } else if constexpr (T == weftFloat32) {
    const auto f = static_cast<float>(e.d);
    std::memcpy(dst, &f, 4);
  } else if constexpr (T == weftFloat64) {
    std::memcpy(dst, &e.d, 8);
  } else {
    std::memcpy(dst, &e.u, typeInfo(T).size);  // little-endian: the low bytes
  }
}

// Floats: d is the value and u the raw bits.
template <weftDataType_t T>
inline Elem decodeT(const void* src) {
  Elem e;
  if constexpr (T == weftFloat16 || T == weftBfloat16) {
    uint16_t h;
    std::memcpy(&h, src, 2);
    e.d = T == weftFloat16 ? halfToFloat(h) : bfloat16ToFloat(h);
    e.u = h;
  } else if constexpr (T == weftFloat32) {
    float f;
    std::memcpy(&f, src, 4);
    e.d = f;
    e.u = floatBits(f);
  } else if constexpr (T == weftFloat64) {
    std::memcpy(&e.d, src, 8);
    std::memcpy(&e.u, src, 8);
  } else {
    std::memcpy(&e.u, src, typeInfo(T).size);
  }
  return e;
}

inline Elem inputValue(weftDataType_t type, InputKind kind, uint64_t seed, uint64_t index) {
  return withType(type, [&]<weftDataType_t T>() { return inputValueT<T>(kind, seed, index); });
}
inline void encodeElem(void* dst, weftDataType_t type, const Elem& e) {
  withType(type, [&]<weftDataType_t T>() { encodeT<T>(dst, e); });
}
inline Elem decodeElem(const void* src, weftDataType_t type) {
  return withType(type, [&]<weftDataType_t T>() { return decodeT<T>(src); });
}
std::string formatElem(weftDataType_t type, const Elem& e);

// dst[i] = inputValue(..., firstIndex + i) for i < count.
void fillInputs(void* dst, weftDataType_t type, InputKind kind, uint64_t seed, uint64_t firstIndex, size_t count);

}  // namespace colltest
