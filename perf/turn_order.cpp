#include "turn_order.h"

#include <algorithm>

namespace commperf {

size_t turnOrderCycle(size_t sides) { return sides % 2 == 0 ? sides : 2 * sides; }

std::vector<size_t> turnOrder(size_t sides, size_t round) {
  std::vector<size_t> order(sides);
  if (sides == 0) return order;
  round %= turnOrderCycle(sides);
  // The first row is 0, 1, n-1, 2, n-2, 3, ...: its steps (+1, -2, +3, -4, ...) are all different mod n, so
  // the rows shifted by 0 .. n-1 hold each ordered pair side by side exactly once (n even). For odd n they do
  // not, and the same rows reversed make up for it: over the 2n rows each ordered pair is side by side twice.
  const size_t shift = round % sides;
  for (size_t j = 0; j < sides; ++j) {
    const size_t base = j == 0 ? 0 : (j % 2 == 1 ? (j + 1) / 2 : sides - j / 2);
    order[j] = (base + shift) % sides;
  }
  if (round >= sides) std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace commperf
