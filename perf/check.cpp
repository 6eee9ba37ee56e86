#include "check.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "types.h"

namespace commperf {

namespace {

enum class Pattern { kWide, kSmall, kProd };

Pattern patternFor(const CheckContext& ctx) {
  if (!ctx.op) return Pattern::kWide;
  switch (*ctx.op) {
    case weftSum:
    case weftAvg:
      return Pattern::kSmall;
    case weftProd:
      return Pattern::kProd;
    default:
      return Pattern::kWide;
  }
}

uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

long long inputValue(int rank, size_t index, Pattern pattern, bool isSigned) {
  uint64_t h = mix(mix(static_cast<uint64_t>(rank) + 0x51ed27ull) ^ static_cast<uint64_t>(index));
  switch (pattern) {
    case Pattern::kSmall:
      return isSigned ? static_cast<long long>(h % 9) - 4 : static_cast<long long>(h % 9);
    case Pattern::kProd: {
      unsigned pick = static_cast<unsigned>(h % 8);  // mostly 1, sometimes 2 (and -1 when signed)
      if (pick == 0) return 2;
      if (pick == 1 && isSigned) return -1;
      return 1;
    }
    case Pattern::kWide:
    default:
      return isSigned ? static_cast<long long>(h % 201) - 100 : static_cast<long long>(h % 201);
  }
}

template <class T>
struct Codec {
  static T encode(double v) { return static_cast<T>(static_cast<long long>(v)); }
  static double decode(T v) { return static_cast<double>(v); }
};
template <>
struct Codec<float> {
  static float encode(double v) { return static_cast<float>(v); }
  static double decode(float v) { return v; }
};
template <>
struct Codec<double> {
  static double encode(double v) { return v; }
  static double decode(double v) { return v; }
};
template <>
struct Codec<Half> {
  static Half encode(double v) { return {floatToHalfBits(static_cast<float>(v))}; }
  static double decode(Half v) { return halfBitsToFloat(v.bits); }
};
template <>
struct Codec<BFloat16> {
  static BFloat16 encode(double v) { return {floatToBfloat16Bits(static_cast<float>(v))}; }
  static double decode(BFloat16 v) { return bfloat16BitsToFloat(v.bits); }
};

template <class T>
T combineInt(T a, T b, weftRedOp_t op) {
  switch (op) {
    case weftProd:
      return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    case weftMax:
      return a > b ? a : b;
    case weftMin:
      return a < b ? a : b;
    default:  // sum, avg
      return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
}

double combineFloat(double a, double b, weftRedOp_t op) {
  switch (op) {
    case weftProd:
      return a * b;
    case weftMax:
      return a > b ? a : b;
    case weftMin:
      return a < b ? a : b;
    default:
      return a + b;
  }
}

template <class T>
void fillTyped(const CheckContext& ctx, void* buffer, size_t count, size_t first) {
  T* out = static_cast<T*>(buffer);
  Pattern pattern = patternFor(ctx);
  bool isSigned = isSignedType(ctx.type);
  for (size_t i = 0; i < count; ++i) out[i] = Codec<T>::encode(double(inputValue(ctx.rank, first + i, pattern, isSigned)));
}

template <class T>
size_t countWrongTyped(const CheckContext& ctx, const void* recv, size_t first) {
  const T* got = static_cast<const T*>(recv);
  Pattern pattern = patternFor(ctx);
  bool isSigned = isSignedType(ctx.type);
  double tolerance = typeEpsilon(ctx.type) * 8.0 * ctx.nranks;
  size_t wrong = 0;
  for (size_t j = 0; j < ctx.counts.recvCount; ++j) {
    Source s = ctx.desc->source(j, ctx.counts.paramCount, ctx.rank, ctx.nranks, ctx.root);
    s.index += first;
    double actual = Codec<T>::decode(got[j]);
    if (!s.reduced) {
      T expected = Codec<T>::encode(double(inputValue(s.rank, s.index, pattern, isSigned)));
      wrong += actual != Codec<T>::decode(expected);
      continue;
    }
    weftRedOp_t op = ctx.op.value_or(weftSum);
    if constexpr (std::is_integral_v<T>) {
      T acc = Codec<T>::encode(double(inputValue(0, s.index, pattern, isSigned)));
      for (int r = 1; r < ctx.nranks; ++r)
        acc = combineInt(acc, Codec<T>::encode(double(inputValue(r, s.index, pattern, isSigned))), op);
      if (op == weftAvg) {
        if constexpr (std::is_signed_v<T>)
          acc = static_cast<T>(static_cast<long long>(acc) / ctx.nranks);
        else
          acc = static_cast<T>(static_cast<unsigned long long>(acc) / static_cast<unsigned>(ctx.nranks));
      }
      wrong += got[j] != acc;
    } else {
      double acc = double(inputValue(0, s.index, pattern, isSigned));
      for (int r = 1; r < ctx.nranks; ++r)
        acc = combineFloat(acc, double(inputValue(r, s.index, pattern, isSigned)), op);
      if (op == weftAvg) acc /= ctx.nranks;
      double expected = Codec<T>::decode(Codec<T>::encode(acc));
      bool ok = op == weftAvg ? std::fabs(actual - expected) <= tolerance * std::fmax(1.0, std::fabs(expected))
                              : actual == expected;
      wrong += !ok;
    }
  }
  return wrong;
}

template <class F>
auto withType(weftDataType_t type, F&& f) {
  switch (type) {
    case weftInt8:
      return f(int8_t{});
    case weftUint8:
      return f(uint8_t{});
    case weftInt32:
      return f(int32_t{});
    case weftUint32:
      return f(uint32_t{});
    case weftInt64:
      return f(int64_t{});
    case weftUint64:
      return f(uint64_t{});
    case weftFloat16:
      return f(Half{});
    case weftBfloat16:
      return f(BFloat16{});
    case weftFloat32:
      return f(float{});
    case weftFloat64:
    default:
      return f(double{});
  }
}

}  // namespace

void fillInput(const CheckContext& ctx, void* buffer, size_t count, size_t first) {
  withType(ctx.type, [&](auto tag) { fillTyped<decltype(tag)>(ctx, buffer, count, first); });
}

void poisonOutput(const CheckContext& ctx, void* buffer, size_t count) {
  // 0x7f.. bytes: a large value (or NaN) in every type, never one of the small integers of the inputs.
  unsigned char* bytes = static_cast<unsigned char*>(buffer);
  size_t n = count * typeSize(ctx.type);
  for (size_t i = 0; i < n; ++i) bytes[i] = 0x7f;
}

size_t countWrong(const CheckContext& ctx, const void* recv, size_t first) {
  if (!ctx.desc->checksRank(ctx.rank, ctx.root)) return 0;
  return withType(ctx.type, [&](auto tag) { return countWrongTyped<decltype(tag)>(ctx, recv, first); });
}

}  // namespace commperf
