// What this machine allows at best, measured in the same run as the collectives so that a report can state
// the fraction of the bound reached. Bandwidths are GB/s (1e9) of destination bytes written per second,
// busbw's accounting; STREAM counts the bytes read too (2x for copy, 3x for add).
#pragma once

#include <cstddef>

namespace commperf {

struct Bounds {
  size_t bytes = 0;      // size of each array
  int threads = 0;       // "all threads": the CPUs this process may run on
  double memcpy1 = 0;    // memcpy, one thread
  double memcpyAll = 0;  // memcpy, all threads, each its slice
  double add1 = 0;       // c = a + b on float arrays, one thread
  double addAll = 0;
  double pingPongUs = -1;  // round trip of a cache line between two processes (fork + shared mmap); -1: failed
};

// Best of a few repetitions of each (a bound, not a typical value). Runs in this process only; the caller
// keeps other ranks idle meanwhile.
Bounds measureBounds(size_t bytes);

}  // namespace commperf
