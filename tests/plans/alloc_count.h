// Counting the allocations made through operator new while a scope is open, program-wide: the replaced
// operators in alloc_count.cpp serve every shared library of the process that allocates with new, libweft
// and its plugins included.
#pragma once

#include <cstdint>

namespace plantest {

// While one lives, every operator new on any thread is counted.
class CountAllocations {
 public:
  CountAllocations();
  ~CountAllocations();
  CountAllocations(const CountAllocations&) = delete;
  CountAllocations& operator=(const CountAllocations&) = delete;
  uint64_t count() const;  // allocations since construction

 private:
  uint64_t start_;
};

}  // namespace plantest
