// --fusion's text table (report.h).
#include <algorithm>
#include <string>

#include "report.h"
#include "report_format.h"
#include "types.h"

namespace commperf {

namespace {

std::string redopOf(const FusionRow& row) { return row.op ? opName(*row.op) : "none"; }

}  // namespace

void printFusionHeader(std::FILE* out, const RunInfo& info) {
  std::fprintf(out,
               "#\n# Fusion: N calls of `bytes` each (per rank: allreduce and allgather's input, reducescatter's "
               "output) in one group (weftGroupStart/End), on N separately allocated buffer pairs\n");
  std::fprintf(out,
               "#   fused: weftCommSetFusion(<collective>, auto)  unfused: weftFusionOff  single: one call of "
               "N*bytes");
  for (const PeerInfo& peer : info.peers) std::fprintf(out, "  %s: N calls", peer.library.c_str());
  std::fprintf(out,
               "\n#   time: per group of N calls (single: per call), median over rounds (min-max of rounds); "
               "launch: collectivesLaunched per group (weftCommGetStats)\n");
  std::fprintf(out, "#   ratios: u/f = unfused / fused, f/s = fused / single");
  for (size_t p = 0; p < info.peers.size(); ++p)
    std::fprintf(out, ", %c/f = %s / fused", info.peers[p].library.at(0), info.peers[p].library.c_str());
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printFusionColumns(std::FILE* out, const CollDesc& desc, const RunInfo& info) {
  std::fprintf(out, "#\n# Collective: %s\n#\n", desc.name);
  std::string titles = centeredIn("fused (auto)", kFormBlock) + centeredIn("unfused (off)", kFormBlock) +
                       centeredIn("single (N*bytes)", kFormBlock);
  for (const PeerInfo& peer : info.peers) titles += centeredIn(peer.library + " (N calls)", kPeerBlock);
  titles.erase(titles.find_last_not_of(' ') + 1);
  std::fprintf(out, "#%37s%s\n", "", titles.c_str());
  printCaseColumns(out, 3, info.peers.size(), false);
  std::fprintf(out, "  %7s  %7s", "ratio", "ratio");
  for (size_t p = 0; p < info.peers.size(); ++p) std::fprintf(out, "  %7s", "ratio");
  std::fprintf(out, "  %s\n", "#wrong");
  printCaseColumns(out, 3, info.peers.size(), true);
  std::fprintf(out, "  %7s  %7s", "(u/f)", "(f/s)");
  std::string wrongUnit = "(f/u/s";
  for (const PeerInfo& peer : info.peers) {
    std::string unit = {'(', peer.library.at(0), '/', 'f', ')'};
    std::fprintf(out, "  %7s", unit.c_str());
    wrongUnit += {'/', peer.library.at(0)};
  }
  std::fprintf(out, "  %s)\n", wrongUnit.c_str());
  std::fflush(out);
}

void printFusionRow(std::FILE* out, const FusionRow& row, const RunInfo& info) {
  std::fprintf(out, "%8d  %10zu  %8s  %6s", row.fusionCase.calls, row.bytes, typeName(row.type),
               redopOf(row).c_str());
  printFormMeasure(out, row.fused, &row.fusedStats);
  printFormMeasure(out, row.unfused, &row.unfusedStats);
  printFormMeasure(out, row.single, &row.singleStats);
  for (const Measure& m : row.peers) printFormMeasure(out, m, nullptr);
  std::fprintf(out, "  %7s  %7s", ratioString(row.unfusedOverFused()).c_str(),
               ratioString(row.fusedOverSingle()).c_str());
  std::string skipped = printPeerRatios(out, row.peers, info, [&](size_t p) { return row.peerOverFused(p); });
  std::fprintf(out, "  %6s", wrongStrings({&row.fused, &row.unfused, &row.single}, row.peers).c_str());
  if (!skipped.empty()) std::fprintf(out, "  (%s)", skipped.c_str());
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printFusionFooter(std::FILE* out, const std::vector<FusionRow>& rows, const RunInfo& info) {
  long long wrong = 0;
  std::string perForm;
  long long fused = 0, unfused = 0, single = 0;
  std::vector<long long> peers(info.peers.size(), 0);
  for (const FusionRow& row : rows) {
    wrong += row.wrong();
    fused += std::max(row.fused.wrong, 0LL);
    unfused += std::max(row.unfused.wrong, 0LL);
    single += std::max(row.single.wrong, 0LL);
    for (size_t p = 0; p < row.peers.size() && p < peers.size(); ++p)
      peers[p] += std::max(row.peers[p].wrong, 0LL);
  }
  perForm = "fused " + std::to_string(fused) + ", unfused " + std::to_string(unfused) + ", single " +
            std::to_string(single);
  for (size_t p = 0; p < peers.size(); ++p)
    perForm += ", " + info.peers[p].library + " " + std::to_string(peers[p]);
  std::fprintf(out, "# Out of bounds values : %lld %s (%s)\n", wrong, wrong == 0 ? "OK" : "FAILED",
               perForm.c_str());
  // Per case: the ratios, with the targets the fusion work is held to (set for AllReduce), and the launches
  // per group.
  for (const FusionRow& row : rows) {
    const bool targets = row.desc->kind == CollKind::kAllReduce;
    auto verdict = [](double r, bool met) { return r <= 0 ? "n/a" : met ? "met" : "missed"; };
    std::fprintf(out, "# %s %d x %zu B %s %s: fused/single %s", row.desc->name, row.fusionCase.calls, row.bytes,
                 typeName(row.type), redopOf(row).c_str(), ratioString(row.fusedOverSingle(), "%.3f").c_str());
    if (targets)
      std::fprintf(out, " (target <= 1.3: %s)", verdict(row.fusedOverSingle(), row.fusedOverSingle() <= 1.3));
    std::fprintf(out, ", unfused/fused %s", ratioString(row.unfusedOverFused(), "%.3f").c_str());
    for (size_t p = 0; p < row.peers.size() && p < info.peers.size(); ++p) {
      double r = row.peerOverFused(p);
      std::fprintf(out, ", %s/fused %s", info.peers[p].library.c_str(), ratioString(r, "%.3f").c_str());
      if (targets && info.peers[p].library == "mpi") std::fprintf(out, " (target >= 10: %s)", verdict(r, r >= 10));
    }
    std::fprintf(out, "; launches per group: fused %lld, unfused %lld, single %lld (of %d calls)\n",
                 row.fusedStats.launches, row.unfusedStats.launches, row.singleStats.launches,
                 row.fusionCase.calls);
  }
  std::fprintf(out, "#\n");
  std::fflush(out);
}

}  // namespace commperf
