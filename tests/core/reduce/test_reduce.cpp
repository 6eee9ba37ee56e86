// Reduction kernels against an independent scalar reference.
//
// The reference computes in double (integers in 64 bits with explicit wraparound) and rounds to the
// element type once. For float16 and bfloat16 it does not use half.h: values come from the textbook
// formula and rounding is a search over the sorted table of representable values. Rounding the exact
// result once is what the kernels must produce even though they go through float32: double rounding
// (exact -> float32 -> 16 bits) is innocuous for +, *, / because 24 >= 2 * 11 + 2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/common/error.h"
#include "core/reduce/half.h"
#include "core/reduce/kernels.h"
#include "core/reduce/reduce.h"

namespace {

constexpr weftRedOp_t kOps[] = {weftSum, weftProd, weftMax, weftMin, weftAvg};
constexpr size_t kCounts[] = {0, 1, 7, 8, 15, 16, 17, 63, 64, 65, 1000, 4099};
constexpr int kDivisors[] = {1, 2, 3, 7, 1000};

// Any int can arrive through the C ABI; converting at run time keeps -Wconversion quiet about constants.
template <typename E>
E fromInt(int v) {
  return static_cast<E>(v);
}

// ---- 16-bit float reference, independent of half.h ----

struct Format16 {
  int mantissaBits;
  int bias;
  uint16_t inf;  // also the first pattern past the largest finite value
};
constexpr Format16 kHalf{10, 15, 0x7c00};
constexpr Format16 kBf16{7, 127, 0x7f80};

double value16(Format16 f, uint16_t h) {
  const int maxExponent = f.inf >> f.mantissaBits;
  const int exponent = (h & 0x7fff) >> f.mantissaBits;
  const int mantissa = h & ((1 << f.mantissaBits) - 1);
  double v;
  if (exponent == maxExponent) {
    v = mantissa != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    v = std::ldexp(mantissa, 1 - f.bias - f.mantissaBits);
  } else {
    v = std::ldexp(mantissa + (1 << f.mantissaBits), exponent - f.bias - f.mantissaBits);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

// Positive patterns 0..inf-1 are the finite values in increasing order. For rounding, the Inf pattern
// stands for the value one ulp past the largest finite one (2^16, 2^128), so overflow is ordinary
// round-to-nearest-even: the largest finite value has an odd mantissa, the tie goes to Inf.
uint16_t round16(Format16 f, double x) {
  if (std::isnan(x)) return static_cast<uint16_t>(f.inf | (1 << (f.mantissaBits - 1)));
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double m = std::fabs(x);
  auto val = [f](int p) {
    return p == f.inf ? std::ldexp(1.0, (f.inf >> f.mantissaBits) - f.bias) : value16(f, static_cast<uint16_t>(p));
  };
  if (m >= val(f.inf)) return sign | f.inf;
  int lo = 0;
  int hi = f.inf;  // val(lo) <= m < val(hi)
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (val(mid) <= m ? lo : hi) = mid;
  }
  const double midpoint = (val(lo) + val(hi)) / 2;  // exact: both have few significant bits
  const int pick = m < midpoint ? lo : m > midpoint ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<uint16_t>(sign | pick);
}

// ---- Per-format reference arithmetic ----

template <typename S>
struct IntRef {
  using Storage = S;
  using Wide = std::conditional_t<std::is_signed_v<S>, int64_t, uint64_t>;
  static S random(std::mt19937_64& rng) {
    const uint64_t r = rng();
    if ((r & 3) == 0)
      return static_cast<S>(static_cast<int64_t>((r >> 8) % 201) - (std::is_signed_v<S> ? 100 : 0));
    return static_cast<S>(r >> 2);
  }
  static S combine(S a, S b, weftRedOp_t op) {
    const auto x = static_cast<uint64_t>(static_cast<Wide>(a));
    const auto y = static_cast<uint64_t>(static_cast<Wide>(b));
    switch (op) {
      case weftProd:
        return static_cast<S>(x * y);  // uint64 -> S keeps the low bits (modular since C++20)
      case weftMax:
        return static_cast<Wide>(a) > static_cast<Wide>(b) ? a : b;
      case weftMin:
        return static_cast<Wide>(a) < static_cast<Wide>(b) ? a : b;
      default:
        return static_cast<S>(x + y);
    }
  }
  static S divide(S v, int d) { return static_cast<S>(static_cast<Wide>(v) / static_cast<Wide>(d)); }
  static bool same(S got, S want) { return got == want; }
  static std::string show(S v) { return std::to_string(+v); }
};

struct F32 {
  using Storage = float;
  static double toDouble(float v) { return v; }
  static float fromDouble(double x) { return static_cast<float>(x); }
  static float random(uint64_t r) {
    // Exponents near 1 so sums and products round; every fourth one any bit pattern.
    const auto bits =
        (r & 3) == 0
            ? static_cast<uint32_t>(r >> 32)
            : static_cast<uint32_t>((r >> 2 & 1) << 31 | (120 + (r >> 3) % 15) << 23 | (r >> 8 & 0x7fffff));
    return std::bit_cast<float>(bits);
  }
};

struct F64 {
  using Storage = double;
  static double toDouble(double v) { return v; }
  static double fromDouble(double x) { return x; }
  static double random(uint64_t r) {
    if ((r & 3) == 0) return std::bit_cast<double>(r);
    return std::ldexp(static_cast<double>(r >> 11), static_cast<int>(r & 15) - 60) * ((r & 16) != 0 ? -1 : 1);
  }
};

template <const Format16& F>
struct F16 {
  using Storage = uint16_t;
  static double toDouble(uint16_t v) { return value16(F, v); }
  static uint16_t fromDouble(double x) { return round16(F, x); }
  static uint16_t random(uint64_t r) {
    if ((r & 1) != 0) return static_cast<uint16_t>(r >> 16);  // any pattern: NaN, Inf, subnormals
    const int bias = F.bias;
    const uint64_t exponent = static_cast<uint64_t>(bias - 4) + (r >> 2) % 9;  // within 2^+-4 of 1
    return static_cast<uint16_t>((r >> 1 & 1) << 15 | exponent << F.mantissaBits |
                                 (r >> 8 & ((1u << F.mantissaBits) - 1)));
  }
};

template <typename F>
struct FloatRef : F {
  using S = typename F::Storage;
  // One in eight is a signed zero, so max/min ties (+0 vs -0) show up in every vector.
  static S random(std::mt19937_64& rng) {
    const uint64_t r = rng();
    return (r & 7) == 0 ? F::fromDouble((r & 8) != 0 ? -0.0 : 0.0) : F::random(r >> 4);
  }
  // Max/min: the kernels' rule (kernels.h): NaN in a gives a, otherwise the larger/smaller, b on ties.
  static S combine(S a, S b, weftRedOp_t op) {
    const double x = F::toDouble(a);
    const double y = F::toDouble(b);
    switch (op) {
      case weftProd:
        return F::fromDouble(x * y);
      case weftMax:
        return std::isnan(x) ? a : (x > y ? a : b);
      case weftMin:
        return std::isnan(x) ? a : (x < y ? a : b);
      default:
        return F::fromDouble(x + y);
    }
  }
  static S divide(S v, int d) { return F::fromDouble(F::toDouble(v) / d); }
  // Bit-exact (so -0 != +0), except that any NaN matches any NaN.
  static bool same(S got, S want) {
    if (std::isnan(F::toDouble(got)) && std::isnan(F::toDouble(want))) return true;
    return std::memcmp(&got, &want, sizeof(S)) == 0;
  }
  static std::string show(S v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(S));
    std::ostringstream out;
    out << "0x" << std::hex << bits << " (" << F::toDouble(v) << ")";
    return out.str();
  }
};

using Half = FloatRef<F16<kHalf>>;
using Bf16 = FloatRef<F16<kBf16>>;

// Forces the portable float16 path for its lifetime.
class PortableFloat16 {
 public:
  explicit PortableFloat16(bool on) { weft::detail::forcePortableFloat16(on); }
  ~PortableFloat16() { weft::detail::forcePortableFloat16(false); }
  PortableFloat16(const PortableFloat16&) = delete;
  PortableFloat16& operator=(const PortableFloat16&) = delete;
};

template <typename R>
void expectSame(const std::vector<typename R::Storage>& got, const std::vector<typename R::Storage>& want,
                const char* what) {
  size_t bad = 0;
  size_t first = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!R::same(got[i], want[i]) && bad++ == 0) first = i;
  }
  if (bad != 0) {
    ADD_FAILURE() << what << ": " << bad << " of " << want.size() << " wrong; first at " << first << ": got "
                  << R::show(got[first]) << ", want " << R::show(want[first]);
  }
}

template <typename R>
void checkTypeOp(weftDataType_t type, weftRedOp_t op) {
  using S = typename R::Storage;
  std::mt19937_64 rng(1234 + type * 10 + op);
  for (size_t count : kCounts) {
    SCOPED_TRACE("count " + std::to_string(count));
    std::vector<S> a(count), b(count), want(count), wantSelf(count);
    for (size_t i = 0; i < count; ++i) {
      a[i] = R::random(rng);
      b[i] = R::random(rng);
      want[i] = R::combine(a[i], b[i], op);
      wantSelf[i] = R::combine(a[i], a[i], op);
    }
    std::vector<S> dst(count);
    weft::reduce(dst.data(), a.data(), b.data(), count, type, op);
    expectSame<R>(dst, want, "dst distinct");

    std::vector<S> inA = a;
    weft::reduceInto(inA.data(), b.data(), count, type, op);
    expectSame<R>(inA, want, "reduceInto (dst == a)");

    std::vector<S> inB = b;
    weft::reduce(inB.data(), a.data(), inB.data(), count, type, op);
    expectSame<R>(inB, want, "dst == b");

    std::vector<S> self = a;
    weft::reduce(self.data(), self.data(), self.data(), count, type, op);
    expectSame<R>(self, wantSelf, "dst == a == b");

    if (op != weftAvg) continue;
    for (int d : kDivisors) {
      SCOPED_TRACE("divisor " + std::to_string(d));
      for (const std::vector<S>* source : {&want, &a}) {
        std::vector<S> q = *source;
        std::vector<S> wantQ(count);
        for (size_t i = 0; i < count; ++i) wantQ[i] = R::divide((*source)[i], d);
        weft::divideBy(q.data(), count, type, d);
        expectSame<R>(q, wantQ, "divideBy");
      }
    }
  }
}

class ReduceSweep : public ::testing::TestWithParam<std::tuple<weftDataType_t, weftRedOp_t>> {};

TEST_P(ReduceSweep, MatchesReference) {
  const auto [type, op] = GetParam();
  switch (type) {
    case weftInt8:
      return checkTypeOp<IntRef<int8_t>>(type, op);
    case weftUint8:
      return checkTypeOp<IntRef<uint8_t>>(type, op);
    case weftInt32:
      return checkTypeOp<IntRef<int32_t>>(type, op);
    case weftUint32:
      return checkTypeOp<IntRef<uint32_t>>(type, op);
    case weftInt64:
      return checkTypeOp<IntRef<int64_t>>(type, op);
    case weftUint64:
      return checkTypeOp<IntRef<uint64_t>>(type, op);
    case weftFloat16:
      for (bool portable : {false, true}) {
        SCOPED_TRACE(portable ? "portable float16" : "F16C float16 (if the CPU has it)");
        const PortableFloat16 mode(portable);
        checkTypeOp<Half>(type, op);
      }
      return;
    case weftBfloat16:
      return checkTypeOp<Bf16>(type, op);
    case weftFloat32:
      return checkTypeOp<FloatRef<F32>>(type, op);
    case weftFloat64:
      return checkTypeOp<FloatRef<F64>>(type, op);
  }
  FAIL() << "unhandled type " << type;
}

std::vector<std::tuple<weftDataType_t, weftRedOp_t>> allTypesAndOps() {
  std::vector<std::tuple<weftDataType_t, weftRedOp_t>> all;
  for (int t = 0; t < WEFT_NUM_DATA_TYPES; ++t) {
    for (weftRedOp_t op : kOps) all.emplace_back(fromInt<weftDataType_t>(t), op);
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(AllTypesAndOps, ReduceSweep, ::testing::ValuesIn(allTypesAndOps()), [](const auto& p) {
  return std::string(weft::dataTypeName(std::get<0>(p.param))) + "_" + weft::redOpName(std::get<1>(p.param));
});

// ---- Hand-picked cases ----

template <typename S>
S reduceOne(S a, S b, weftDataType_t type, weftRedOp_t op) {
  S d{};
  weft::reduce(&d, &a, &b, 1, type, op);
  return d;
}

TEST(ReduceCases, IntegerWraparound) {
  EXPECT_EQ(reduceOne<int8_t>(127, 1, weftInt8, weftSum), -128);
  EXPECT_EQ(reduceOne<int8_t>(-128, -1, weftInt8, weftSum), 127);
  EXPECT_EQ(reduceOne<int8_t>(16, 16, weftInt8, weftProd), 0);
  EXPECT_EQ(reduceOne<int8_t>(-128, -1, weftInt8, weftProd), -128);
  EXPECT_EQ(reduceOne<int8_t>(-5, 3, weftInt8, weftMax), 3);
  EXPECT_EQ(reduceOne<int8_t>(-5, 3, weftInt8, weftMin), -5);
  EXPECT_EQ(reduceOne<uint8_t>(255, 1, weftUint8, weftSum), 0);
  EXPECT_EQ(reduceOne<uint8_t>(200, 2, weftUint8, weftProd), 144);
  EXPECT_EQ(reduceOne<uint8_t>(200, 100, weftUint8, weftMax), 200);  // would be 100 if compared as signed
  EXPECT_EQ(reduceOne<int32_t>(INT32_MAX, 1, weftInt32, weftSum), INT32_MIN);
  EXPECT_EQ(reduceOne<int32_t>(65536, 65536, weftInt32, weftProd), 0);
  EXPECT_EQ(reduceOne<uint32_t>(UINT32_MAX, 2, weftUint32, weftSum), 1u);
  EXPECT_EQ(reduceOne<int64_t>(INT64_MAX, 1, weftInt64, weftSum), INT64_MIN);
  EXPECT_EQ(reduceOne<int64_t>(INT64_MIN, -1, weftInt64, weftProd), INT64_MIN);
  EXPECT_EQ(reduceOne<int64_t>(-7, -9, weftInt64, weftMax), -7);
  EXPECT_EQ(reduceOne<uint64_t>(UINT64_MAX, UINT64_MAX, weftUint64, weftProd), 1u);
  EXPECT_EQ(reduceOne<uint64_t>(UINT64_MAX, 1, weftUint64, weftMin), 1u);
}

TEST(ReduceCases, IntegerDivisionTruncates) {
  std::vector<int8_t> s8 = {-7, 7, -128, 127, -1};
  weft::divideBy(s8.data(), s8.size(), weftInt8, 2);
  EXPECT_EQ(s8, (std::vector<int8_t>{-3, 3, -64, 63, 0}));
  std::vector<int8_t> big = {-128, 127};
  weft::divideBy(big.data(), big.size(), weftInt8, 300);  // divisor wider than the type
  EXPECT_EQ(big, (std::vector<int8_t>{0, 0}));
  std::vector<uint8_t> u8 = {255, 3};
  weft::divideBy(u8.data(), u8.size(), weftUint8, 2);
  EXPECT_EQ(u8, (std::vector<uint8_t>{127, 1}));
  std::vector<uint64_t> u64 = {UINT64_MAX};
  weft::divideBy(u64.data(), u64.size(), weftUint64, 3);
  EXPECT_EQ(u64[0], UINT64_MAX / 3);
}

// Both float16 paths: F16C (where the CPU has it) and portable.
class Float16Cases : public ::testing::TestWithParam<bool> {};

TEST_P(Float16Cases, RoundToNearestEvenOverflowSubnormals) {
  const PortableFloat16 mode(GetParam());
  auto h = [](uint16_t a, uint16_t b, weftRedOp_t op) { return reduceOne<uint16_t>(a, b, weftFloat16, op); };
  EXPECT_EQ(h(0x3c00, 0x1000, weftSum), 0x3c00);           // 1 + 2^-11: tie, even is 1
  EXPECT_EQ(h(0x3c01, 0x1000, weftSum), 0x3c02);           // (1 + 2^-10) + 2^-11: tie, even is up
  EXPECT_EQ(h(0x6800, 0x3c00, weftSum), 0x6800);           // 2048 + 1: tie, stays 2048
  EXPECT_EQ(h(0x6801, 0x3c00, weftSum), 0x6802);           // 2050 + 1: tie, goes to 2052
  EXPECT_EQ(h(0x7bff, 0x7bff, weftSum), 0x7c00);           // 65504 + 65504 = Inf
  EXPECT_EQ(h(0x7bff, 0x4c00, weftSum), 0x7c00);           // 65504 + 16 = 65520: tie, even is Inf
  EXPECT_EQ(h(0x7bff, 0x4800, weftSum), 0x7bff);           // 65504 + 8 rounds back to 65504
  EXPECT_EQ(h(0xfbff, 0xfbff, weftSum), 0xfc00);           // -Inf
  EXPECT_EQ(h(0x5c00, 0x5c00, weftProd), 0x7c00);          // 256 * 256 = 65536 = Inf
  EXPECT_EQ(h(0x0001, 0x0001, weftSum), 0x0002);           // subnormals add exactly
  EXPECT_EQ(h(0x0001, 0x3800, weftProd), 0x0000);          // 2^-24 * 0.5: tie, even is 0
  EXPECT_EQ(h(0x0003, 0x3800, weftProd), 0x0002);          // 1.5 * 2^-24: tie, even is 2 * 2^-24
  EXPECT_EQ(h(0x3c00, 0xbc00, weftSum), 0x0000);           // 1 + -1 = +0
  EXPECT_EQ(h(0x7c00, 0xfc00, weftSum) & 0x7fff, 0x7e00);  // Inf - Inf: quiet NaN
  EXPECT_EQ(h(0x7e00, 0x3c00, weftMax) & 0x7c00, 0x7c00);  // NaN propagates
  EXPECT_NE(h(0x3c00, 0x7e00, weftMin) & 0x3ff, 0);
  std::vector<uint16_t> v = {0x3c00, 0x3e00, 0x0001, 0x7bff};  // 1, 1.5, 2^-24, 65504
  weft::divideBy(v.data(), v.size(), weftFloat16, 2);
  EXPECT_EQ(v, (std::vector<uint16_t>{0x3800, 0x3a00, 0x0000, 0x77ff}));
}

INSTANTIATE_TEST_SUITE_P(Paths, Float16Cases, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "Portable" : "Native"; });

TEST(ReduceCases, Bfloat16RoundToNearestEven) {
  auto b = [](uint16_t x, uint16_t y, weftRedOp_t op) { return reduceOne<uint16_t>(x, y, weftBfloat16, op); };
  EXPECT_EQ(b(0x3f80, 0x3b80, weftSum), 0x3f80);  // 1 + 2^-8: tie, even is 1
  EXPECT_EQ(b(0x3f81, 0x3b80, weftSum), 0x3f82);  // (1 + 2^-7) + 2^-8: tie, even is up
  EXPECT_EQ(b(0x7f7f, 0x7f7f, weftSum), 0x7f80);  // largest finite doubled: Inf
  EXPECT_EQ(b(0x7f7f, 0x3f80, weftSum), 0x7f7f);
  EXPECT_EQ(b(0x7fc0, 0x3f80, weftMax) & 0x7f80, 0x7f80);  // NaN propagates
  EXPECT_NE(b(0x3f80, 0x7fc1, weftMax) & 0x7f, 0);
}

TEST(ReduceCases, FloatMaxMinRule) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(reduceOne(nan, 1.0f, weftFloat32, weftMax)));
  EXPECT_TRUE(std::isnan(reduceOne(1.0f, nan, weftFloat32, weftMax)));
  EXPECT_TRUE(std::isnan(reduceOne(nan, 1.0f, weftFloat32, weftMin)));
  EXPECT_TRUE(std::isnan(reduceOne(1.0, std::numeric_limits<double>::quiet_NaN(), weftFloat64, weftMin)));
  EXPECT_TRUE(std::signbit(reduceOne(0.0f, -0.0f, weftFloat32, weftMax)));  // ties give b
  EXPECT_FALSE(std::signbit(reduceOne(-0.0f, 0.0f, weftFloat32, weftMax)));
  EXPECT_EQ(reduceOne(-2.0, 3.0, weftFloat64, weftMin), -2.0);
}

TEST(ReduceCases, UnknownTypeOrOpThrows) {
  float x[2] = {1, 2};
  auto expectInvalid = [](auto call) {
    try {
      call();
      ADD_FAILURE() << "no exception";
    } catch (const weft::Error& e) {
      EXPECT_EQ(e.code(), weftInvalidArgument) << e.what();
    }
  };
  for (int bad : {-1, WEFT_NUM_DATA_TYPES, 1000}) {
    expectInvalid([&] { weft::reduce(x, x, x, 2, fromInt<weftDataType_t>(bad), weftSum); });
    expectInvalid([&] { weft::reduce(x, x, x, 0, fromInt<weftDataType_t>(bad), weftSum); });
    expectInvalid([&] { weft::divideBy(x, 2, fromInt<weftDataType_t>(bad), 2); });
  }
  for (int bad : {-1, WEFT_NUM_RED_OPS, 77}) {
    expectInvalid([&] { weft::reduce(x, x, x, 2, weftFloat32, fromInt<weftRedOp_t>(bad)); });
    expectInvalid([&] { weft::reduceInto(x, x, 2, weftFloat32, fromInt<weftRedOp_t>(bad)); });
  }
  expectInvalid([&] { weft::divideBy(x, 2, weftFloat32, 0); });
  expectInvalid([&] { weft::divideBy(x, 2, weftFloat32, -3); });
  EXPECT_EQ(x[0], 1.0f);
  EXPECT_EQ(x[1], 2.0f);
}

TEST(ReduceCases, NamesAndSizes) {
  const char* names[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                         "uint64", "float16", "bfloat16", "float32", "float64"};
  const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  for (int t = 0; t < WEFT_NUM_DATA_TYPES; ++t) {
    const auto type = fromInt<weftDataType_t>(t);
    EXPECT_TRUE(weft::isValidDataType(type));
    EXPECT_STREQ(weft::dataTypeName(type), names[t]);
    EXPECT_EQ(weft::dataTypeSize(type), sizes[t]);
  }
  const char* ops[] = {"sum", "prod", "max", "min", "avg"};
  for (int o = 0; o < WEFT_NUM_RED_OPS; ++o) {
    EXPECT_TRUE(weft::isValidRedOp(fromInt<weftRedOp_t>(o)));
    EXPECT_STREQ(weft::redOpName(fromInt<weftRedOp_t>(o)), ops[o]);
  }
  EXPECT_FALSE(weft::isValidDataType(fromInt<weftDataType_t>(-1)));
  EXPECT_FALSE(weft::isValidDataType(fromInt<weftDataType_t>(WEFT_NUM_DATA_TYPES)));
  EXPECT_FALSE(weft::isValidRedOp(fromInt<weftRedOp_t>(WEFT_NUM_RED_OPS)));
  EXPECT_EQ(weft::dataTypeSize(fromInt<weftDataType_t>(42)), 0u);
  EXPECT_STREQ(weft::dataTypeName(fromInt<weftDataType_t>(42)), "unknown");
  EXPECT_STREQ(weft::redOpName(fromInt<weftRedOp_t>(-1)), "unknown");
}

// ---- Conversions, exhaustively ----

template <typename ToFloat, typename FromFloat>
void checkConversions(Format16 f, ToFloat toFloat, FromFloat fromFloat) {
  int failures = 0;
  for (uint32_t i = 0; i < 65536 && failures < 10; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const double want = value16(f, h);
    const float got = toFloat(h);
    if (std::isnan(want)) {
      const uint16_t back = fromFloat(got);
      if (!std::isnan(got) || (back & f.inf) != f.inf || (back & ~f.inf & 0x7fff) == 0) {
        ADD_FAILURE() << "NaN 0x" << std::hex << i << " -> 0x" << back;
        ++failures;
      }
    } else if (static_cast<double>(got) != want || std::signbit(got) != std::signbit(want) ||
               fromFloat(got) != h) {
      ADD_FAILURE() << "pattern 0x" << std::hex << i << ": widened to " << got << ", back to 0x" << fromFloat(got);
      ++failures;
    }
  }
  // Rounding: each midpoint between neighbours (a tie), one float ulp either side, both signs.
  const float inf = std::numeric_limits<float>::infinity();
  for (int p = 0; p < f.inf && failures < 10; ++p) {
    const double next = p + 1 == f.inf ? std::ldexp(1.0, (f.inf >> f.mantissaBits) - f.bias)
                                       : value16(f, static_cast<uint16_t>(p + 1));
    const auto mid = static_cast<float>((value16(f, static_cast<uint16_t>(p)) + next) / 2);
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, inf), -mid, -std::nextafter(mid, inf)}) {
      if (fromFloat(x) != round16(f, x)) {
        ADD_FAILURE() << "round " << x << ": got 0x" << std::hex << fromFloat(x) << ", want 0x" << round16(f, x);
        ++failures;
      }
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 1000000 && failures < 10; ++i) {
    const auto x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (!std::isnan(x) && fromFloat(x) != round16(f, x)) {
      ADD_FAILURE() << "round " << x << ": got 0x" << std::hex << fromFloat(x) << ", want 0x" << round16(f, x);
      ++failures;
    }
  }
}

TEST(Conversions, Float16Exhaustive) { checkConversions(kHalf, weft::halfToFloat, weft::floatToHalf); }

TEST(Conversions, Bfloat16Exhaustive) { checkConversions(kBf16, weft::bfloat16ToFloat, weft::floatToBfloat16); }

// The F16C and portable float16 paths agree on every pattern, NaNs included (as NaNs).
TEST(Conversions, Float16PathsAgree) {
  std::vector<uint16_t> a(65536);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(i);
  std::mt19937_64 rng(11);
  for (int round = 0; round < 8; ++round) {
    std::vector<uint16_t> b(a.size());
    for (auto& v : b) v = static_cast<uint16_t>(rng());
    for (weftRedOp_t op : kOps) {
      std::vector<uint16_t> native(a.size()), portable(a.size());
      weft::reduce(native.data(), a.data(), b.data(), a.size(), weftFloat16, op);
      {
        const PortableFloat16 mode(true);
        weft::reduce(portable.data(), a.data(), b.data(), a.size(), weftFloat16, op);
      }
      expectSame<Half>(native, portable, weft::redOpName(op));
    }
    std::vector<uint16_t> native = b, portable = b;
    weft::divideBy(native.data(), native.size(), weftFloat16, 3 + round);
    {
      const PortableFloat16 mode(true);
      weft::divideBy(portable.data(), portable.size(), weftFloat16, 3 + round);
    }
    expectSame<Half>(native, portable, "divideBy");
  }
}

}  // namespace
