// One collective call under test: prepares guarded buffers with deterministic inputs, launches the call
// (on a stream or not), and verifies the result against the reference, the guards and the send buffer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "buffers.h"
#include "common.h"
#include "harness.h"

namespace colltest {

struct CaseParams {
  Coll coll = Coll::kAllReduce;
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;  // reducing collectives only
  size_t count = 0;          // per rank / per peer as in weft.h
  bool inPlace = false;
  int root = 0;  // Broadcast and Reduce only
};

class CollCase {
 public:
  CollCase(const CaseParams& params, uint64_t salt) : p_(params), salt_(salt) {}

  void prepare(const CommView& view);
  weftResult_t launch(const CommView& view, weftStream_t stream);
  // Checks and counts into report; returns the number of failures found.
  uint64_t verify(const CommView& view, Report& report);
  std::string describe(const CommView& view) const;

 private:
  void checkGuards(const GuardedBuffer& buffer, const char* which, Report& report, uint64_t* failures,
                   const std::string& what);
  void checkUnchanged(const void* now, Report& report, uint64_t* failures, const std::string& what);
  template <weftDataType_t T>
  void verifyResults(const CommView& view, Report& report, uint64_t* failures, const std::string& what);
  // Compares result elements [begin, end) at got (indexed from got[0]) with expected(i, &absSum): within
  // tolerance for reductions, bit-exact for data movement.
  template <weftDataType_t T, typename Expected>
  void checkRange(const CommView& view, const unsigned char* got, size_t begin, size_t end, bool reducing,
                  Expected expected, Report& report, uint64_t* failures, const std::string& what);

  CaseParams p_;
  uint64_t salt_;
  GuardedBuffer send_, recv_;
  std::vector<unsigned char> sendCopy_;  // input before the call, where it must stay unchanged
  const void* sendPtr_ = nullptr;
  void* recvPtr_ = nullptr;
};

// Prepare, launch with no stream (expectOk), verify.
void runCase(const CommView& view, const CaseParams& params, Report& report);

}  // namespace colltest
