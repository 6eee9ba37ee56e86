// Summaries of repeated timings. On a shared, noisy machine the mean is dragged by a few slow rounds; the
// median is what a round typically costs and min-max shows how noisy the run was.
#pragma once

#include <span>
#include <vector>

namespace commperf {

struct Spread {
  double median = 0;
  double min = 0;
  double max = 0;
};

// Median (mean of the two middle values for an even count), min and max; all 0 for no values.
Spread summarize(std::span<const double> values);

// Geometric mean of positive values (others are skipped); 0 when none is positive. Used for ratios, where
// 2x faster and 2x slower should cancel out.
double geometricMean(std::span<const double> values);

}  // namespace commperf
