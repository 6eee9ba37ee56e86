#include "stats.h"

#include <algorithm>
#include <cmath>

namespace commperf {

Spread summarize(std::span<const double> values) {
  if (values.empty()) return {};
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return {median, sorted.front(), sorted.back()};
}

double geometricMean(std::span<const double> values) {
  double logSum = 0;
  int count = 0;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) continue;
    logSum += std::log(v);
    ++count;
  }
  return count ? std::exp(logSum / count) : 0.0;
}

}  // namespace commperf
