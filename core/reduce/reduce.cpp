// Reduction kernels: one entry point per (type, op), picked from a table.
//
// Vectorisation: the entry points carry target_clones, so GCC compiles each one for AVX-512, AVX2 and
// the baseline and an ifunc resolver picks the best at load time. The AVX-512 clone is x86-64-v4
// (F+BW+DQ+VL, every AVX-512 CPU but Xeon Phi) rather than plain avx512f: without BW, GCC keeps the
// 8- and 16-bit types (int8, uint8, bfloat16) in ymm registers. The loops themselves (kernels.h) are
// plain scalar code that auto-vectorises in each clone. float16 is the exception: GCC cannot vectorise
// the bit-twiddling conversion, so where the CPU has F16C an explicit VCVTPH2PS/VCVTPS2PH path is used.
#include "core/reduce/reduce.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/common/error.h"
#include "core/reduce/kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define WEFT_HAVE_F16C 1
#if defined(__SANITIZE_THREAD__)
// GCC instruments target_clones' ifunc resolvers for ThreadSanitizer (a __tsan_func_entry call through the
// PLT), and the dynamic linker runs a resolver while it is still relocating libweft.so, before that PLT
// works: every program died before main. A TSan build (WEFT_SANITIZE=thread) keeps one portable copy.
#define WEFT_CLONES
#else
#define WEFT_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
#define WEFT_TARGET_F16C __attribute__((target("avx2,f16c")))
#else
#define WEFT_HAVE_F16C 0
#define WEFT_CLONES
#endif

namespace weft {
namespace detail {
namespace {

std::atomic<bool> gForcePortableFloat16{false};

using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t count);
using DivideFn = void (*)(void* dst, size_t count, int divisor);

// One target_clones entry point per (type, op). Avg shares the sum kernel; divideBy finishes it.
#define WEFT_DEFINE_KERNELS(NAME, TRAITS)                                        \
  WEFT_CLONES void NAME##Sum(void* d, const void* a, const void* b, size_t n) {  \
    reduceAny<TRAITS, Sum>(d, a, b, n);                                          \
  }                                                                              \
  WEFT_CLONES void NAME##Prod(void* d, const void* a, const void* b, size_t n) { \
    reduceAny<TRAITS, Prod>(d, a, b, n);                                         \
  }                                                                              \
  WEFT_CLONES void NAME##Max(void* d, const void* a, const void* b, size_t n) {  \
    reduceAny<TRAITS, Max>(d, a, b, n);                                          \
  }                                                                              \
  WEFT_CLONES void NAME##Min(void* d, const void* a, const void* b, size_t n) {  \
    reduceAny<TRAITS, Min>(d, a, b, n);                                          \
  }                                                                              \
  WEFT_CLONES void NAME##Divide(void* d, size_t n, int divisor) { divideAll<TRAITS>(d, n, divisor); }

WEFT_DEFINE_KERNELS(int8, NativeTraits<int8_t>)
WEFT_DEFINE_KERNELS(uint8, NativeTraits<uint8_t>)
WEFT_DEFINE_KERNELS(int32, NativeTraits<int32_t>)
WEFT_DEFINE_KERNELS(uint32, NativeTraits<uint32_t>)
WEFT_DEFINE_KERNELS(int64, NativeTraits<int64_t>)
WEFT_DEFINE_KERNELS(uint64, NativeTraits<uint64_t>)
WEFT_DEFINE_KERNELS(bfloat16, Bfloat16Traits)
WEFT_DEFINE_KERNELS(float32, NativeTraits<float>)
WEFT_DEFINE_KERNELS(float64, NativeTraits<double>)

#undef WEFT_DEFINE_KERNELS

#if WEFT_HAVE_F16C
// float16 with F16C: eight elements per step, widened with VCVTPH2PS, combined in float32, narrowed
// with VCVTPS2PH in round-to-nearest-even (immediate rounding, independent of MXCSR). Each step loads
// both operands before storing, so dst may alias a or b exactly.

template <typename Op>
WEFT_TARGET_F16C __m256 f16cApply(__m256 a, __m256 b) {
  if constexpr (std::is_same_v<Op, Sum>) {
    return _mm256_add_ps(a, b);
  } else if constexpr (std::is_same_v<Op, Prod>) {
    return _mm256_mul_ps(a, b);
  } else {
    // MAXPS/MINPS(a, b) is `a > b ? a : b` / `a < b ? a : b`; then a NaN in a wins: the rule in kernels.h.
    const __m256 picked = std::is_same_v<Op, Max> ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b);
    return _mm256_blendv_ps(picked, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
}

WEFT_TARGET_F16C inline __m256 loadHalf8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

WEFT_TARGET_F16C inline void storeHalf8(uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

template <typename Op>
WEFT_TARGET_F16C void f16cReduce(void* dstRaw, const void* aRaw, const void* bRaw, size_t count) {
  auto* dst = static_cast<uint16_t*>(dstRaw);
  const auto* a = static_cast<const uint16_t*>(aRaw);
  const auto* b = static_cast<const uint16_t*>(bRaw);
  size_t i = 0;
  for (; i + 8 <= count; i += 8) storeHalf8(dst + i, f16cApply<Op>(loadHalf8(a + i), loadHalf8(b + i)));
  if (i < count) {
    // Tail: pad to a whole vector on the stack rather than read past the caller's buffers.
    const size_t bytes = (count - i) * sizeof(uint16_t);
    uint16_t ta[8] = {};
    uint16_t tb[8] = {};
    uint16_t td[8];
    std::memcpy(ta, a + i, bytes);
    std::memcpy(tb, b + i, bytes);
    storeHalf8(td, f16cApply<Op>(loadHalf8(ta), loadHalf8(tb)));
    std::memcpy(dst + i, td, bytes);
  }
}

WEFT_TARGET_F16C void f16cDivide(void* dstRaw, size_t count, int divisor) {
  auto* dst = static_cast<uint16_t*>(dstRaw);
  const __m256 d = _mm256_set1_ps(static_cast<float>(divisor));
  size_t i = 0;
  for (; i + 8 <= count; i += 8) storeHalf8(dst + i, _mm256_div_ps(loadHalf8(dst + i), d));
  if (i < count) {
    const size_t bytes = (count - i) * sizeof(uint16_t);
    uint16_t t[8] = {};
    std::memcpy(t, dst + i, bytes);
    storeHalf8(t, _mm256_div_ps(loadHalf8(t), d));
    std::memcpy(dst + i, t, bytes);
  }
}

bool useF16c() {
  static const bool supported = [] {
    __builtin_cpu_init();  // we may run before libgcc's own constructor has filled in the CPU model
    // F16C through cpuid: clang's __builtin_cpu_supports does not know the "f16c" name, GCC's does.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
    return __builtin_cpu_supports("avx2") && f16c;
  }();
  return supported && !gForcePortableFloat16.load(std::memory_order_relaxed);
}
#endif  // WEFT_HAVE_F16C

template <typename Op>
void float16Reduce(void* dst, const void* a, const void* b, size_t count) {
#if WEFT_HAVE_F16C
  if (useF16c()) return f16cReduce<Op>(dst, a, b, count);
#endif
  reduceAny<Float16Traits, Op>(dst, a, b, count);
}

void float16Divide(void* dst, size_t count, int divisor) {
#if WEFT_HAVE_F16C
  if (useF16c()) return f16cDivide(dst, count, divisor);
#endif
  divideAll<Float16Traits>(dst, count, divisor);
}

struct TypeKernels {
  const char* name;
  ReduceFn ops[WEFT_NUM_RED_OPS];  // indexed by weftRedOp_t
  DivideFn divide;
};

#define WEFT_KERNELS(NAME, TYPE) \
  { #NAME, {NAME##Sum, NAME##Prod, NAME##Max, NAME##Min, NAME##Sum }, NAME##Divide }

static_assert(weftSum == 0 && weftProd == 1 && weftMax == 2 && weftMin == 3 && weftAvg == 4);
static_assert(weftInt8 == 0 && weftUint8 == 1 && weftInt32 == 2 && weftUint32 == 3 && weftInt64 == 4 &&
              weftUint64 == 5 && weftFloat16 == 6 && weftBfloat16 == 7 && weftFloat32 == 8 && weftFloat64 == 9);
// reduce.h's element sizes are those of the kernels' C types below.
static_assert(kDataTypeBytes[weftInt8] == sizeof(int8_t) && kDataTypeBytes[weftUint8] == sizeof(uint8_t) &&
              kDataTypeBytes[weftInt32] == sizeof(int32_t) && kDataTypeBytes[weftUint32] == sizeof(uint32_t) &&
              kDataTypeBytes[weftInt64] == sizeof(int64_t) && kDataTypeBytes[weftUint64] == sizeof(uint64_t) &&
              kDataTypeBytes[weftFloat16] == sizeof(uint16_t) &&
              kDataTypeBytes[weftBfloat16] == sizeof(uint16_t) && kDataTypeBytes[weftFloat32] == sizeof(float) &&
              kDataTypeBytes[weftFloat64] == sizeof(double));

// Indexed by weftDataType_t.
const TypeKernels kKernels[WEFT_NUM_DATA_TYPES] = {
    WEFT_KERNELS(int8, int8_t),
    WEFT_KERNELS(uint8, uint8_t),
    WEFT_KERNELS(int32, int32_t),
    WEFT_KERNELS(uint32, uint32_t),
    WEFT_KERNELS(int64, int64_t),
    WEFT_KERNELS(uint64, uint64_t),
    {"float16",
     {float16Reduce<Sum>, float16Reduce<Prod>, float16Reduce<Max>, float16Reduce<Min>, float16Reduce<Sum>},
     float16Divide},
    WEFT_KERNELS(bfloat16, uint16_t),
    WEFT_KERNELS(float32, float),
    WEFT_KERNELS(float64, double),
};

#undef WEFT_KERNELS

constexpr const char* kRedOpNames[WEFT_NUM_RED_OPS] = {"sum", "prod", "max", "min", "avg"};

}  // namespace

void forcePortableFloat16(bool force) { gForcePortableFloat16.store(force, std::memory_order_relaxed); }

}  // namespace detail

const char* dataTypeName(weftDataType_t type) {
  return isValidDataType(type) ? detail::kKernels[type].name : "unknown";
}

const char* redOpName(weftRedOp_t op) { return isValidRedOp(op) ? detail::kRedOpNames[op] : "unknown"; }

void reduce(void* dst, const void* a, const void* b, size_t count, weftDataType_t type, weftRedOp_t op) {
  if (!isValidDataType(type)) fail(weftInvalidArgument, "reduce: unknown data type {}", static_cast<int>(type));
  if (!isValidRedOp(op)) fail(weftInvalidArgument, "reduce: unknown reduction op {}", static_cast<int>(op));
  if (count == 0) return;
  detail::kKernels[type].ops[op](dst, a, b, count);
}

void divideBy(void* dst, size_t count, weftDataType_t type, int divisor) {
  if (!isValidDataType(type)) fail(weftInvalidArgument, "divideBy: unknown data type {}", static_cast<int>(type));
  // The divisor is a rank count; zero or negative means a caller bug, not a value to divide by.
  if (divisor < 1) fail(weftInvalidArgument, "divideBy: divisor must be at least 1, got {}", divisor);
  if (count == 0 || divisor == 1) return;
  detail::kKernels[type].divide(dst, count, divisor);
}

}  // namespace weft
