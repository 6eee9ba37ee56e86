// Element-wise loop templates behind reduce() and divideBy(). Internal to core/reduce.
//
// The loops are plain scalar code that GCC auto-vectorises at -O3. They are always_inline so that each
// target_clones entry point in reduce.cpp gets its own copy compiled for its ISA (AVX-512, AVX2, SSE2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/reduce/half.h"

#define WEFT_ALWAYS_INLINE [[gnu::always_inline]] inline

namespace weft::detail {

// Test hook: true makes float16 use the portable conversions even where F16C is available, so the
// tests can cover both paths on one machine. Not for production use.
void forcePortableFloat16(bool force);

// The element types as they sit in the caller's buffers. A buffer is a void* and may start at any address
// (a float array inside a packed byte message, say: MPI and NCCL accept it). An access through a plain
// float* there is undefined, and a vectoriser that assumes element alignment may peel a loop into aligned
// vector moves that fault. These aliases lower the alignment to one byte (GCC's and Clang's `aligned` on
// an alias; on a dependent type it would be ignored, hence one specialisation per type), which makes every
// access defined. The generated loops are the same: they already use unaligned vector moves, which cost
// nothing extra on aligned data.
template <typename T>
struct Unaligned;
#define WEFT_UNALIGNED(T)               \
  template <>                           \
  struct Unaligned<T> {                 \
    using type [[gnu::aligned(1)]] = T; \
  };
WEFT_UNALIGNED(int8_t)
WEFT_UNALIGNED(uint8_t)
WEFT_UNALIGNED(uint16_t)
WEFT_UNALIGNED(int32_t)
WEFT_UNALIGNED(uint32_t)
WEFT_UNALIGNED(int64_t)
WEFT_UNALIGNED(uint64_t)
WEFT_UNALIGNED(float)
WEFT_UNALIGNED(double)
#undef WEFT_UNALIGNED

// Storage is the element in memory, Compute the type the operation runs in. Native types compute in
// themselves; float16 and bfloat16 widen to float32 and round once on the way back.
template <typename T>
struct NativeTraits {
  using Storage = typename Unaligned<T>::type;
  using Compute = T;
  WEFT_ALWAYS_INLINE static Compute load(Storage v) { return v; }
  WEFT_ALWAYS_INLINE static Storage store(Compute v) { return v; }
};

struct Float16Traits {
  using Storage = Unaligned<uint16_t>::type;
  using Compute = float;
  WEFT_ALWAYS_INLINE static Compute load(Storage v) { return halfToFloat(v); }
  WEFT_ALWAYS_INLINE static Storage store(Compute v) { return floatToHalf(v); }
};

struct Bfloat16Traits {
  using Storage = Unaligned<uint16_t>::type;
  using Compute = float;
  WEFT_ALWAYS_INLINE static Compute load(Storage v) { return bfloat16ToFloat(v); }
  WEFT_ALWAYS_INLINE static Storage store(Compute v) { return floatToBfloat16(v); }
};

// Integer sum and prod wrap like the C type. Signed overflow is undefined in C++, so the arithmetic runs
// in an unsigned type: unsigned int for types narrower than int (uint8 * uint8 would otherwise promote to
// signed int, fine for 8 bits but not in general), the same-width unsigned type otherwise. Converting the
// result back is modular since C++20.
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct Sum {
  template <typename T>
  WEFT_ALWAYS_INLINE static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    } else {
      return a + b;
    }
  }
};

struct Prod {
  template <typename T>
  WEFT_ALWAYS_INLINE static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
    } else {
      return a * b;
    }
  }
};

// Float max/min rule: a NaN operand gives NaN (a's if a is NaN, else b's); otherwise the larger (smaller)
// value, and b when they compare equal (so max(+0, -0) is -0 and max(-0, +0) is +0). `a > b ? a : b` is
// exactly what MAXPS computes, and the NaN fix-up is one compare and one blend, so this vectorises and the
// F16C path in reduce.cpp can reproduce it bit for bit. For integers the NaN test folds away.
struct Max {
  template <typename T>
  WEFT_ALWAYS_INLINE static T apply(T a, T b) {
    const T larger = a > b ? a : b;
    if constexpr (std::is_floating_point_v<T>) {
      return a != a ? a : larger;  // NOLINT(misc-redundant-expression): NaN test that vectorises
    } else {
      return larger;
    }
  }
};

struct Min {
  template <typename T>
  WEFT_ALWAYS_INLINE static T apply(T a, T b) {
    const T smaller = a < b ? a : b;
    if constexpr (std::is_floating_point_v<T>) {
      return a != a ? a : smaller;  // NOLINT(misc-redundant-expression)
    } else {
      return smaller;
    }
  }
};

template <typename Tr, typename Op>
WEFT_ALWAYS_INLINE typename Tr::Storage combine(typename Tr::Storage a, typename Tr::Storage b) {
  return Tr::store(Op::apply(Tr::load(a), Tr::load(b)));
}

// dst, a and b are distinct (a == b is fine: restrict only constrains objects that are written).
template <typename Tr, typename Op>
WEFT_ALWAYS_INLINE void reduceDistinct(typename Tr::Storage* __restrict dst,
                                       const typename Tr::Storage* __restrict a,
                                       const typename Tr::Storage* __restrict b, size_t count) {
  for (size_t i = 0; i < count; ++i) dst[i] = combine<Tr, Op>(a[i], b[i]);
}

// dst is one operand, src the other; SrcFirst says which side src is on (max/min are not symmetric
// for NaNs and signed zeros). Without this variant GCC's runtime alias check would see dst and a overlap
// and fall back to the scalar loop.
template <typename Tr, typename Op, bool SrcFirst>
WEFT_ALWAYS_INLINE void reduceInPlace(typename Tr::Storage* __restrict dst,
                                      const typename Tr::Storage* __restrict src, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    dst[i] = SrcFirst ? combine<Tr, Op>(src[i], dst[i]) : combine<Tr, Op>(dst[i], src[i]);
  }
}

// dst == a == b.
template <typename Tr, typename Op>
WEFT_ALWAYS_INLINE void reduceSelf(typename Tr::Storage* __restrict dst, size_t count) {
  for (size_t i = 0; i < count; ++i) dst[i] = combine<Tr, Op>(dst[i], dst[i]);
}

// Picks the loop for the aliasing at hand: dst may equal a or b exactly.
template <typename Tr, typename Op>
WEFT_ALWAYS_INLINE void reduceAny(void* dstRaw, const void* aRaw, const void* bRaw, size_t count) {
  using S = typename Tr::Storage;
  S* dst = static_cast<S*>(dstRaw);
  const S* a = static_cast<const S*>(aRaw);
  const S* b = static_cast<const S*>(bRaw);
  if (dst == a && dst == b) {
    reduceSelf<Tr, Op>(dst, count);
  } else if (dst == a) {
    reduceInPlace<Tr, Op, false>(dst, b, count);
  } else if (dst == b) {
    reduceInPlace<Tr, Op, true>(dst, a, count);
  } else {
    reduceDistinct<Tr, Op>(dst, a, b, count);
  }
}

// Floats divide in their compute type (float16/bfloat16 in float32) and round once. Integers use C's
// truncating division of the value by the divisor, done in 64 bits so a divisor that does not fit the
// element type (say 300 for int8) still divides correctly. The caller guarantees divisor >= 1.
template <typename Tr>
WEFT_ALWAYS_INLINE void divideAll(void* dstRaw, size_t count, int divisor) {
  using S = typename Tr::Storage;
  using C = typename Tr::Compute;
  S* __restrict dst = static_cast<S*>(dstRaw);
  if constexpr (std::is_floating_point_v<C>) {
    const C d = static_cast<C>(divisor);
    for (size_t i = 0; i < count; ++i) dst[i] = Tr::store(Tr::load(dst[i]) / d);
  } else {
    using Wide = std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>;
    const auto d = static_cast<Wide>(divisor);
    for (size_t i = 0; i < count; ++i) dst[i] = static_cast<S>(static_cast<Wide>(dst[i]) / d);
  }
}

}  // namespace weft::detail
