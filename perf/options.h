// Command-line options, spelled as nccl-tests spells them, plus --coll and --json.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace commperf {

struct Options {
  size_t minBytes = 8;
  size_t maxBytes = 64ull << 20;
  size_t stepFactor = 2;
  size_t stepBytes = 1ull << 20;  // used when stepFactor == 1
  int iters = 20;
  int warmupIters = 5;
  bool check = true;
  int root = 0;
  std::vector<weftDataType_t> types{weftFloat32};
  std::vector<weftRedOp_t> ops{weftSum};
  std::vector<std::string> colls{"allreduce"};
  std::string jsonPath;  // empty: no JSON
  std::string commandLine;
};

enum class ParseStatus { kRun, kHelp, kError };

struct ParseResult {
  ParseStatus status = ParseStatus::kRun;
  std::string error;  // set with kError
};

// Never exits and never prints: the caller (rank 0 only) reports.
ParseResult parseOptions(int argc, char** argv, Options& options);
std::string usage(const char* program);

// "64M" -> 67108864 (K, M, G are powers of 1024; a trailing B is allowed). False on garbage or overflow.
bool parseByteCount(const std::string& text, size_t& value);

// The sizes swept, in order.
std::vector<size_t> sweepSizes(const Options& options);

}  // namespace commperf
