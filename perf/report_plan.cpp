// --plan's text table (report.h).
#include <algorithm>
#include <string>

#include "report.h"
#include "report_format.h"
#include "types.h"

namespace commperf {

namespace {

// The plan's info block: "  %5s  %5s  %6s  %5s  %4s  %8s" (45 characters).
constexpr size_t kPlanInfoBlock = 45;

std::string mismatchString(long long n) { return n < 0 ? "N/A" : std::to_string(n); }

std::string planInfoString(const PlanInfo& i) {
  if (!i.measured) return "n/a";
  return std::to_string(i.numOps) + " ops, " + std::to_string(i.numSubgraphs) + " subgraphs, " +
         std::to_string(i.opsReused) + " reused, " + std::to_string(i.streamsWithoutReuse) +
         " streams without reuse, " + std::to_string(i.streamsUsed) + " used, " + std::to_string(i.resourceBytes) +
         " B";
}

std::string compileFormString(const PlanCompileForm& f, int repetitions, const char* what) {
  if (!f.ran) return std::string("failed (") + what + "): " + f.error;
  char text[160];
  std::snprintf(text, sizeof text, "%.2f ms (%s; %.2f-%.2f over %d)", f.timeMs, what, f.minMs, f.maxMs,
                repetitions);
  return text;
}

}  // namespace

void printPlanHeader(std::FILE* out, const RunInfo& info) {
  std::fprintf(
      out,
      "#\n# Plans: N allreduce calls of `bytes` each on N separately allocated buffer pairs (weftPlanBegin/End "
      "record them once per case)\n");
  std::fprintf(out,
               "#   plan: one weftPlanLaunch of the N recorded plain calls  eager: the N calls issued directly  "
               "plan-grp/eager-grp: the same with the N calls in weftGroupStart/End");
  for (const PeerInfo& peer : info.peers) std::fprintf(out, "  %s: N calls", peer.library.c_str());
  std::fprintf(out,
               "\n#   time: per launch of N calls, median over rounds (min-max of rounds); launch: "
               "collectivesLaunched per launch (weftCommGetStats)\n");
  std::fprintf(out, "#   ratios: p/e = plan / eager, e/p = eager / plan, pg/eg = plan-group / eager-group");
  for (size_t p = 0; p < info.peers.size(); ++p)
    std::fprintf(out, ", %c/p = %s / plan", info.peers[p].library.at(0), info.peers[p].library.c_str());
  std::fprintf(out,
               "\n#   plan info (weftPlanGetInfo of the plain plan): ops, subgraphs, ops reused, streams without "
               "reuse, streams used, resource bytes\n");
  std::fprintf(out,
               "#   mismatch: elements whose bits differ between the plan's and the eager calls' outputs "
               "(plain/group; -c 1)\n#\n");
  std::string titles = centeredIn("plan", kFormBlock) + centeredIn("eager", kFormBlock) +
                       centeredIn("plan-group", kFormBlock) + centeredIn("eager-group", kFormBlock);
  for (const PeerInfo& peer : info.peers) titles += centeredIn(peer.library + " (N calls)", kPeerBlock);
  titles += std::string(9 * (3 + info.peers.size()), ' ');
  titles += centeredIn("plan info", kPlanInfoBlock);
  titles.erase(titles.find_last_not_of(' ') + 1);
  std::fprintf(out, "#%37s%s\n", "", titles.c_str());
  printCaseColumns(out, 4, info.peers.size(), false);
  std::fprintf(out, "  %7s  %7s  %7s", "ratio", "ratio", "ratio");
  for (size_t p = 0; p < info.peers.size(); ++p) std::fprintf(out, "  %7s", "ratio");
  std::fprintf(out, "  %5s  %5s  %6s  %5s  %4s  %8s", "ops", "subgr", "reused", "str0", "str", "resB");
  std::fprintf(out, "  %-14s  %s\n", "#wrong", "mismatch");
  printCaseColumns(out, 4, info.peers.size(), true);
  std::fprintf(out, "  %7s  %7s  %7s", "(p/e)", "(e/p)", "(pg/eg)");
  std::string wrongUnit = "(p/e/pg/eg";
  for (const PeerInfo& peer : info.peers) {
    std::string unit = {'(', peer.library.at(0), '/', 'p', ')'};
    std::fprintf(out, "  %7s", unit.c_str());
    wrongUnit += {'/', peer.library.at(0)};
  }
  std::fprintf(out, "  %5s  %5s  %6s  %5s  %4s  %8s", "", "", "", "", "", "(B)");
  std::fprintf(out, "  %-14s  %s\n", (wrongUnit + ")").c_str(), "(plain/group)");
  std::fflush(out);
}

void printPlanRow(std::FILE* out, const PlanRow& row, const RunInfo& info) {
  std::fprintf(out, "%8d  %10zu  %8s  %6s", row.planCase.calls, row.bytes, typeName(row.type), opName(row.op));
  printFormMeasure(out, row.plan, &row.planStats);
  printFormMeasure(out, row.eager, &row.eagerStats);
  printFormMeasure(out, row.planGroup, &row.planGroupStats);
  printFormMeasure(out, row.eagerGroup, &row.eagerGroupStats);
  for (const Measure& m : row.peers) printFormMeasure(out, m, nullptr);
  std::fprintf(out, "  %7s  %7s  %7s", ratioString(row.planOverEager()).c_str(),
               ratioString(row.eagerOverPlan()).c_str(), ratioString(row.planGroupOverEagerGroup()).c_str());
  std::string skipped = printPeerRatios(out, row.peers, info, [&](size_t p) { return row.peerOverPlan(p); });
  const PlanInfo& i = row.info;
  std::fprintf(out, "  %5d  %5d  %6d  %5d  %4d  %8zu", i.numOps, i.numSubgraphs, i.opsReused,
               i.streamsWithoutReuse, i.streamsUsed, i.resourceBytes);
  std::string mismatch = mismatchString(row.mismatches) + "/" + mismatchString(row.groupMismatches);
  std::fprintf(out, "  %-14s  %s",
               wrongStrings({&row.plan, &row.eager, &row.planGroup, &row.eagerGroup}, row.peers).c_str(),
               mismatch.c_str());
  if (!skipped.empty()) std::fprintf(out, "  (%s)", skipped.c_str());
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printPlanFooter(std::FILE* out, const std::vector<PlanRow>& rows, const PlanCompile& compile,
                     const RunInfo& info) {
  long long wrong = 0, plan = 0, eager = 0, planGroup = 0, eagerGroup = 0, mismatches = 0, groupMismatches = 0;
  bool compared = false;
  std::vector<long long> peers(info.peers.size(), 0);
  for (const PlanRow& row : rows) {
    wrong += row.wrong();
    plan += std::max(row.plan.wrong, 0LL);
    eager += std::max(row.eager.wrong, 0LL);
    planGroup += std::max(row.planGroup.wrong, 0LL);
    eagerGroup += std::max(row.eagerGroup.wrong, 0LL);
    for (size_t p = 0; p < row.peers.size() && p < peers.size(); ++p)
      peers[p] += std::max(row.peers[p].wrong, 0LL);
    compared = compared || row.mismatches >= 0;
    mismatches += std::max(row.mismatches, 0LL);
    groupMismatches += std::max(row.groupMismatches, 0LL);
  }
  std::string perForm = "plan " + std::to_string(plan) + ", eager " + std::to_string(eager) + ", plan-group " +
                        std::to_string(planGroup) + ", eager-group " + std::to_string(eagerGroup);
  for (size_t p = 0; p < peers.size(); ++p)
    perForm += ", " + info.peers[p].library + " " + std::to_string(peers[p]);
  std::fprintf(out, "# Out of bounds values : %lld %s (%s)\n", wrong, wrong == 0 ? "OK" : "FAILED",
               perForm.c_str());
  if (compared)
    std::fprintf(out, "# Plan/eager mismatches: %lld %s (plain %lld, group %lld elements differ bitwise)\n",
                 mismatches + groupMismatches, mismatches + groupMismatches == 0 ? "OK" : "FAILED", mismatches,
                 groupMismatches);
  else
    std::fprintf(out, "# Plan/eager mismatches: N/A (not compared with -c 0)\n");
  for (const PlanRow& row : rows) {
    double r = row.planOverEager();
    // The issue sets its target for one case: 100 x 1 KiB at 2 ranks.
    std::string target;
    if (row.planCase.calls == 100 && row.bytes == 1024 && info.nranks == 2) {
      char text[64];
      std::snprintf(text, sizeof text, " (target <= %g: %s)", kPlanOverEagerTarget,
                    r <= 0                      ? "n/a"
                    : r <= kPlanOverEagerTarget ? "met"
                                                : "missed");
      target = text;
    }
    std::fprintf(out, "# %d x %zu B %s %s: plan/eager %s%s, eager/plan %s, plan-group/eager-group %s",
                 row.planCase.calls, row.bytes, typeName(row.type), opName(row.op), ratioString(r, "%.3f").c_str(),
                 target.c_str(), ratioString(row.eagerOverPlan(), "%.3f").c_str(),
                 ratioString(row.planGroupOverEagerGroup(), "%.3f").c_str());
    for (size_t p = 0; p < row.peers.size() && p < info.peers.size(); ++p)
      std::fprintf(out, ", %s/plan %s", info.peers[p].library.c_str(),
                   ratioString(row.peerOverPlan(p), "%.3f").c_str());
    std::fprintf(out,
                 "; launches per launch: plan %lld, eager %lld, plan-group %lld, eager-group %lld (of %d calls)\n",
                 row.planStats.launches, row.eagerStats.launches, row.planGroupStats.launches,
                 row.eagerGroupStats.launches, row.planCase.calls);
    std::fprintf(out, "#   plan: %s; group plan: %s\n", planInfoString(row.info).c_str(),
                 planInfoString(row.groupInfo).c_str());
  }
  if (compile.measured) {
    const PlanCompileForm& f = compile.plain;
    // The target holds for both forms: the slower one decides.
    double worst = std::max(f.ran ? f.timeMs : 0, compile.group.ran ? compile.group.timeMs : 0);
    std::fprintf(out, "# compile %d ops: %s, %s (target < %g ms: %s)\n", compile.ops,
                 compileFormString(f, compile.repetitions, "plain calls").c_str(),
                 compileFormString(compile.group, compile.repetitions, "in one group").c_str(),
                 kPlanCompileTargetMs,
                 !f.ran || !compile.group.ran   ? "n/a"
                 : worst < kPlanCompileTargetMs ? "met"
                                                : "missed");
    std::fprintf(
        out,
        "#   weftPlanBegin + %d allreduce calls of %zu B %s %s + weftPlanEnd, median of %d (max across ranks)",
        compile.ops, compile.bytes, typeName(compile.type), opName(compile.op), compile.repetitions);
    if (!compile.reuseSetting.empty())
      std::fprintf(out, "; WEFT_SUBGRAPH_REUSE=%s for this measurement only", compile.reuseSetting.c_str());
    std::fprintf(out, "\n");
    if (f.ran) std::fprintf(out, "#   compiled plan: %s\n", planInfoString(f.info).c_str());
  }
  std::fprintf(out, "#\n");
  std::fflush(out);
}

}  // namespace commperf
