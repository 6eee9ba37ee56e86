// The text table on rank 0: nccl-tests' layout without a peer; with one, Weft and the peer side by side with
// the ratio. Files (--json, --csv) are written by report_json.cpp and report_csv.cpp.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "bench.h"
#include "fusion_bench.h"
#include "info.h"
#include "options.h"
#include "plan_bench.h"
#include "summary.h"

namespace commperf {

void printHeader(std::FILE* out, const Options& options, const RunInfo& info);
void printBounds(std::FILE* out, const Bounds& bounds);
void printCollHeader(std::FILE* out, const CollSummary& coll, const RunInfo& info);
void printRow(std::FILE* out, const Row& row, const RunInfo& info);
void printCollFooter(std::FILE* out, const CollSummary& coll, const RunInfo& info);
// With a peer: one line per collective with both average bus bandwidths and the ratio.
void printSummary(std::FILE* out, const std::vector<CollSummary>& colls, const RunInfo& info);

// --fusion: the header (what each column times), one line per case, type and op, then the footer (per case:
// the ratios against their targets and the launches per group; the wrong values of every form).
void printFusionHeader(std::FILE* out, const RunInfo& info);
// Before each collective's rows: its name and the table's column titles.
void printFusionColumns(std::FILE* out, const CollDesc& desc, const RunInfo& info);
void printFusionRow(std::FILE* out, const FusionRow& row, const RunInfo& info);
void printFusionFooter(std::FILE* out, const std::vector<FusionRow>& rows, const RunInfo& info);

// --plan: the header, one line per case, type and op, then the footer (wrong values and plan/eager
// mismatches of every form; per case the ratios against their target, the launches per launch and both
// plans' info; the compile time of a plan of 10000 calls).
void printPlanHeader(std::FILE* out, const RunInfo& info);
void printPlanRow(std::FILE* out, const PlanRow& row, const RunInfo& info);
void printPlanFooter(std::FILE* out, const std::vector<PlanRow>& rows, const PlanCompile& compile,
                     const RunInfo& info);

// Everything a run produced, for the files.
struct Results {
  std::vector<Row> rows;
  std::vector<CollSummary> colls;
  std::vector<FusionRow> fusion;  // --fusion's cases, in order
  std::vector<PlanRow> plan;      // --plan's cases, in order
  PlanCompile planCompile;        // measured with --plan
  long long totalWrong = 0;       // the sweep's, --fusion's and --plan's
  long long planMismatches = 0;   // --plan: elements whose bits differ between plan and eager outputs
};

// False (with errno set by stdio) when the file cannot be written.
bool writeJson(const std::string& path, const Options& options, const RunInfo& info, const Results& results);
bool writeCsv(const std::string& path, const Options& options, const RunInfo& info, const Results& results);

}  // namespace commperf
