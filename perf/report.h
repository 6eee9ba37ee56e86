// Output in nccl-tests' layout on rank 0, and the optional JSON file.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "bench.h"
#include "options.h"

namespace commperf {

struct RunInfo {
  int nranks = 0;
  int version = 0;
  std::vector<std::string> rankLines;  // "Rank  0 Pid  1234 on host"
};

void printHeader(std::FILE* out, const Options& options, const RunInfo& info);
void printCollHeader(std::FILE* out, const char* collName);
void printRow(std::FILE* out, const Row& row);
void printCollFooter(std::FILE* out, long long wrong, double avgBusBw);

// Accumulates the rows and writes them as one JSON document.
class JsonReport {
 public:
  JsonReport(const Options& options, const RunInfo& info) : options_(options), info_(info) {}
  void add(const Row& row) { rows_.push_back(row); }
  // False (with errno set by stdio) when the file cannot be written.
  bool write(const std::string& path, long long totalWrong) const;

 private:
  const Options& options_;
  const RunInfo& info_;
  std::vector<Row> rows_;
};

}  // namespace commperf
