// Counting the allocations made through operator new while a scope is open, program-wide: the replaced
// operators in alloc_count.cpp serve every shared library of the process that allocates with new, libweft
// and its plugins included.
#pragma once

#include <cstdint>
#include <string>

namespace plantest {

// While one lives, every operator new on any thread is counted.
class CountAllocations {
 public:
  CountAllocations();
  ~CountAllocations();
  CountAllocations(const CountAllocations&) = delete;
  CountAllocations& operator=(const CountAllocations&) = delete;
  uint64_t count() const;  // allocations since construction
};

// Where the first allocation counted since the last CountAllocations began was made: its thread (the
// counting thread or another) and its call stack, one frame per line (module, offset, nearest symbol), for
// a failure message that says what allocated. Empty when nothing was counted.
std::string firstCountedAllocation();

}  // namespace plantest
