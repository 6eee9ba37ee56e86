// The timing loop: for one collective, size, type and op, time the out-of-place and in-place forms
// (warm-up excluded, average per iteration, max across ranks), then check each once.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "colls.h"
#include "options.h"
#include "weft/weft.h"

namespace commperf {

// Prints the failing call, weftGetErrorString and weftGetLastErrorMessage, then MPI_Abort(1).
void weftCheck(weftResult_t result, const char* what, int rank);

struct Measure {
  bool ran = false;      // false: no such form (in-place alltoall/sendrecv)
  double timeUs = 0;     // average per iteration, max across ranks
  double algBw = 0;      // GB/s
  double busBw = 0;      // GB/s
  long long wrong = -1;  // summed over ranks; -1 when not checked
};

struct Row {
  const CollDesc* desc;
  size_t size;   // bytes, max(send, recv) buffer as nccl-tests prints
  size_t count;  // elements passed to Weft
  weftDataType_t type;
  std::optional<weftRedOp_t> op;
  int root;  // -1 when the collective has none
  Measure outOfPlace;
  Measure inPlace;
};

class Bench {
 public:
  // capacityBytes: the largest size to be run.
  Bench(weftComm_t comm, int rank, int nranks, const Options& options, size_t capacityBytes);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  Row run(const CollDesc& desc, size_t bytes, weftDataType_t type, std::optional<weftRedOp_t> op);

 private:
  Measure measure(const CollDesc& desc, const Row& row, const CollCounts& counts, bool inPlace);

  weftComm_t comm_;
  int rank_;
  int nranks_;
  const Options& options_;
  size_t capacity_;
  unsigned char* send_ = nullptr;
  unsigned char* recv_ = nullptr;
};

}  // namespace commperf
