// The independent reference: reduces the ranks' inputs sequentially (rank order) in higher precision
// (double for floats, uint64 with the wrap to the type's width done explicitly for integers), and the
// comparison of a result element against it. Inline templates: evaluated for every element.
#pragma once

#include <cmath>

#include "common.h"
#include "inputs.h"
#include "weft/weft.h"

namespace colltest {

template <weftDataType_t T>
class Reducer {
 public:
  explicit Reducer(weftRedOp_t op) : op_(op) {}

  void add(const Elem& e) {
    if constexpr (kInfo.isFloat) {
      absSum_ += std::fabs(e.d);
      if (first_) {
        dacc_ = e.d;
      } else if (op_ == weftSum || op_ == weftAvg) {
        dacc_ += e.d;
      } else if (op_ == weftProd) {
        dacc_ *= e.d;
      } else if (op_ == weftMax) {
        dacc_ = e.d > dacc_ ? e.d : dacc_;
      } else {
        dacc_ = e.d < dacc_ ? e.d : dacc_;
      }
    } else {
      if (first_) {
        acc_ = e.u;
      } else if (op_ == weftSum || op_ == weftAvg) {
        acc_ += e.u;  // mod 2^64; truncated to the width in result()
      } else if (op_ == weftProd) {
        acc_ *= e.u;
      } else {
        const bool greater =
            kInfo.isSigned ? signExtend(e.u, kInfo.bits) > signExtend(acc_, kInfo.bits) : e.u > acc_;
        const bool less = e.u != acc_ && !greater;
        if (op_ == weftMax ? greater : less) acc_ = e.u;
      }
    }
    first_ = false;
  }

  Elem result(int nranks) const {
    Elem e;
    if constexpr (kInfo.isFloat) {
      e.d = op_ == weftAvg ? dacc_ / nranks : dacc_;
    } else {
      constexpr uint64_t mask = widthMask(kInfo.bits);
      e.u = acc_ & mask;
      if (op_ == weftAvg) {  // the wrapped sum in the type, divided with C's truncation toward zero
        if constexpr (kInfo.isSigned) {
          e.u = static_cast<uint64_t>(signExtend(e.u, kInfo.bits) / static_cast<int64_t>(nranks)) & mask;
        } else {
          e.u /= static_cast<uint64_t>(nranks);
        }
      }
    }
    return e;
  }

  double absSum() const { return absSum_; }

 private:
  static constexpr TypeInfo kInfo = typeInfo(T);
  weftRedOp_t op_;
  bool first_ = true;
  uint64_t acc_ = 0;
  double dacc_ = 0.0;
  double absSum_ = 0.0;
};

// Integers, max and min: exact. Floats with eps the unit roundoff of the type:
//   sum:  |got - ref| <= nranks * eps * sum_i |x_i|
//   avg:  eps * sum_i |x_i| + 2 * eps * |ref|   (the sum's error / nranks, the quotient's rounding, slack)
//   prod: (nranks + 1) * eps * |ref|
template <weftDataType_t T>
inline bool resultMatches(weftRedOp_t op, int nranks, const Elem& got, const Elem& ref, double absSum,
                          double* tolerance) {
  constexpr TypeInfo info = typeInfo(T);
  *tolerance = 0.0;
  if constexpr (!info.isFloat) {
    return got.u == ref.u;
  } else {
    if (std::isnan(got.d)) return false;
    if (op == weftMax || op == weftMin) return got.d == ref.d;
    if (op == weftSum) {
      *tolerance = nranks * info.eps * absSum;
    } else if (op == weftAvg) {
      *tolerance = info.eps * absSum + 2.0 * info.eps * std::fabs(ref.d);
    } else {
      *tolerance = (nranks + 1) * info.eps * std::fabs(ref.d);
    }
    return std::fabs(got.d - ref.d) <= *tolerance;
  }
}

}  // namespace colltest
