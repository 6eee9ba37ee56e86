#include "report.h"

#include <algorithm>
#include <string>

#include "types.h"

namespace commperf {

namespace {

// nccl-tests: more decimals for short times.
std::string timeString(double us, bool pad = true) {
  char text[32];
  const char* format = us < 100.0     ? (pad ? "%7.2f" : "%.2f")
                       : us < 10000.0 ? (pad ? "%7.1f" : "%.1f")
                                      : (pad ? "%7.0f" : "%.0f");
  std::snprintf(text, sizeof text, format, us);
  return text;
}

std::string wrongString(const Measure& m) { return !m.ran ? "-" : m.wrong < 0 ? "N/A" : std::to_string(m.wrong); }

void printMeasure(std::FILE* out, const Measure& m) {
  if (!m.ran) {
    std::fprintf(out, "  %7s  %6s  %6s  %5s", "N/A", "N/A", "N/A", "N/A");
    return;
  }
  std::fprintf(out, "  %7s  %6.2f  %6.2f  %5s", timeString(m.timeUs).c_str(), m.algBw, m.busBw,
               wrongString(m).c_str());
}

// Peer mode: median time, min-max spread, busbw.
void printSideBySide(std::FILE* out, const Measure& m) {
  if (!m.ran) {
    std::fprintf(out, "  %8s  %17s  %7s", "n/a", "", "n/a");
    return;
  }
  std::string spread = timeString(m.minUs, false) + "-" + timeString(m.maxUs, false);
  std::fprintf(out, "  %8s  %17s  %7.2f", timeString(m.timeUs).c_str(), spread.c_str(), m.busBw);
}

double percentOf(double value, double bound) { return bound > 0 ? 100.0 * value / bound : 0; }

// As printf's %g: the footer's figures.
std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// What a peer goes by in the units line: "p" with one peer, as before; with several, its initial ("m", "g").
char peerLetter(const RunInfo& info, size_t peer) {
  return info.peers.size() == 1 ? 'p' : info.peers[peer].library.at(0);
}

// "mpi" with one peer (as before), "peer" with several.
std::string peerWord(const RunInfo& info) { return info.peers.size() == 1 ? info.peers[0].library : "peer"; }

}  // namespace

void printHeader(std::FILE* out, const Options& options, const RunInfo& info) {
  std::string step = options.stepFactor > 1 ? std::to_string(options.stepFactor) + "(factor)"
                                            : std::to_string(options.stepBytes) + "(bytes)";
  std::fprintf(out,
               "# nThread 1 minBytes %zu maxBytes %zu step: %s warmup iters: %d iters: %d (%d rounds of %d) "
               "validation: %d nranks %d\n",
               options.minBytes, options.maxBytes, step.c_str(), options.warmupIters,
               options.rounds * options.itersPerRound(), options.rounds, options.itersPerRound(),
               options.check ? 1 : 0, info.nranks);
  std::fprintf(out, "# Weft version %d (%s), plugins: %s, algo: %s\n", info.version, info.weftVersion.c_str(),
               info.weftPlugins.c_str(), info.weftAlgo.c_str());
  std::fprintf(out, "# MPI: %s\n", info.mpiVersion.c_str());
  for (const PeerInfo& peer : info.peers) {
    std::fprintf(out, "# Peer: %s, %s", peer.library.c_str(), peer.version.c_str());
    if (!peer.transport.empty()) std::fprintf(out, ", %s", peer.transport.c_str());
    std::fprintf(out, "\n");
  }
  if (!info.peers.empty()) {
    std::string word = peerWord(info);
    std::fprintf(out, "# Times: median over rounds (min-max of rounds); ratio = %s time / weft time%s\n",
                 word.c_str(), info.peers.size() > 1 ? ", for each peer" : "");
  }
  if (info.bounds) printBounds(out, *info.bounds);
  std::fprintf(out, "#\n# Using ranks\n");
  for (const std::string& line : info.rankLines) std::fprintf(out, "#  %s\n", line.c_str());
}

void printBounds(std::FILE* out, const Bounds& b) {
  std::fprintf(out, "# Bounds (one process, %zu MiB arrays, best of 5; GB/s of bytes written):\n", b.bytes >> 20);
  std::fprintf(out, "#   memcpy        1 thread %7.2f GB/s   %2d threads %7.2f GB/s\n", b.memcpy1, b.threads,
               b.memcpyAll);
  std::fprintf(out, "#   c = a + b     1 thread %7.2f GB/s   %2d threads %7.2f GB/s\n", b.add1, b.threads,
               b.addAll);
  if (b.pingPongUs >= 0)
    std::fprintf(out, "#   cache-line ping-pong between two processes: %.3f us round trip\n", b.pingPongUs);
  else
    std::fprintf(out, "#   cache-line ping-pong between two processes: failed\n");
}

void printCollHeader(std::FILE* out, const CollSummary& coll, const RunInfo& info) {
  std::fprintf(out, "#\n# Collective: %s    weft: %s", coll.desc->name, coll.weftAlgorithm.c_str());
  for (size_t p = 0; p < info.peers.size() && p < coll.peers.size(); ++p)
    std::fprintf(out, "    %s: %s", info.peers[p].library.c_str(), coll.peers[p].algorithm.c_str());
  std::fprintf(out, "\n#\n");
  if (info.peers.empty()) {
    std::fprintf(out, "#%73s%32s\n", "out-of-place", "in-place          ");
    std::fprintf(out,
                 "#       size         count      type   redop    root"
                 "     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
    std::fprintf(out,
                 "#        (B)    (elements)                            "
                 "   (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
    return;
  }
  // Weft's block is as wide as printSideBySide's output, "  %8s  %17s  %7s" = 38 characters; a peer's block
  // adds its ratio, "  %7s", 47 in all. With one peer this is the layout it always had.
  auto centered = [](const std::string& title, size_t blockWidth) {
    size_t width = 36, left = title.size() < width ? (width - title.size()) / 2 : 0;
    std::string line = "  " + std::string(left, ' ') + title;
    return line + std::string(line.size() < blockWidth ? blockWidth - line.size() : 0, ' ');
  };
  std::string titles = centered("weft, out-of-place", 38);
  for (const PeerInfo& peer : info.peers) titles += centered(peer.library + ", out-of-place", 38 + 9);
  titles.erase(titles.find_last_not_of(' ') + 1);
  std::fprintf(out, "#%51s%s\n", "", titles.c_str());
  std::fprintf(out, "#%11s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root");
  std::fprintf(out, "  %8s  %17s  %7s", "time", "min-max", "busbw");
  for (size_t p = 0; p < info.peers.size(); ++p)
    std::fprintf(out, "  %8s  %17s  %7s  %7s", "time", "min-max", "busbw", "ratio");
  std::fprintf(out, "  %s\n", "#wrong");
  std::fprintf(out, "#%11s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "");
  std::fprintf(out, "  %8s  %17s  %7s", "(us)", "(us, rounds)", "(GB/s)");
  std::string wrongUnit = "(w";
  for (size_t p = 0; p < info.peers.size(); ++p) {
    std::string unit = {'(', peerLetter(info, p), '/', 'w', ')'};
    std::fprintf(out, "  %8s  %17s  %7s  %7s", "(us)", "(us, rounds)", "(GB/s)", unit.c_str());
    wrongUnit += {'/', peerLetter(info, p)};
  }
  std::fprintf(out, "  %s)\n", wrongUnit.c_str());
}

void printRow(std::FILE* out, const Row& row, const RunInfo& info) {
  std::fprintf(out, "%12zu  %12zu  %8s  %6s  %6d", row.size, row.count, typeName(row.type),
               row.op ? opName(*row.op) : "none", row.root);
  if (info.peers.empty()) {
    printMeasure(out, row.outOfPlace);
    printMeasure(out, row.inPlace);
  } else {
    printSideBySide(out, row.outOfPlace);
    std::string wrong = wrongString(row.outOfPlace), skipped;
    for (size_t p = 0; p < row.peers.size(); ++p) {
      const Measure& m = row.peers[p];
      printSideBySide(out, m);
      if (row.ratio(p) > 0)
        std::fprintf(out, "  %7.3g", row.ratio(p));
      else
        std::fprintf(out, "  %7s", "n/a");
      wrong += '/';
      wrong += wrongString(m);
      if (!m.ran && !m.skipped.empty()) {
        // With one peer the reason speaks for itself; with several, say whose it is.
        if (!skipped.empty()) skipped += "; ";
        skipped += row.peers.size() == 1 ? m.skipped : info.peers[p].library + ": " + m.skipped;
      }
    }
    std::fprintf(out, "  %6s", wrong.c_str());
    if (!skipped.empty()) std::fprintf(out, "  (%s)", skipped.c_str());
  }
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printCollFooter(std::FILE* out, const CollSummary& coll, const RunInfo& info) {
  long long wrong = coll.totalWrong();
  if (info.peers.empty()) {
    std::fprintf(out, "# Out of bounds values : %lld %s\n", wrong, wrong == 0 ? "OK" : "FAILED");
    std::fprintf(out, "# Avg bus bandwidth    : %g \n", coll.weft.avgBusBw);
  } else {
    std::string perLibrary = "weft " + std::to_string(coll.weft.wrong);
    std::string busBw = "weft " + number(coll.weft.avgBusBw);
    for (const PeerSummary& p : coll.peers) {
      perLibrary += ", " + p.library + " " + std::to_string(p.wrong);
      busBw += "  " + p.library + " " + number(p.avgBusBw);
    }
    std::fprintf(out, "# Out of bounds values : %lld %s (%s)\n", wrong, wrong == 0 ? "OK" : "FAILED",
                 perLibrary.c_str());
    std::fprintf(out, "# Avg bus bandwidth    : %s \n", busBw.c_str());
    for (const PeerSummary& p : coll.peers)
      if (p.ratios)
        std::fprintf(out, "# %-21s: %.3f (geometric mean over %d sizes; > 1: Weft is faster)\n",
                     ("Time ratio " + p.library + "/weft").c_str(), p.geomeanRatio, p.ratios);
  }
  if (info.bounds) {
    double bound = info.bounds->memcpy1;
    std::fprintf(out, "# Peak bus bandwidth   : weft %.3g GB/s (%.0f%% of 1-thread memcpy)", coll.weft.peakBusBw,
                 percentOf(coll.weft.peakBusBw, bound));
    for (const PeerSummary& p : coll.peers)
      std::fprintf(out, "  %s %.3g GB/s (%.0f%%)", p.library.c_str(), p.peakBusBw, percentOf(p.peakBusBw, bound));
    std::fprintf(out, "\n");
  }
  std::fprintf(out, "#\n");
  std::fflush(out);
}

void printSummary(std::FILE* out, const std::vector<CollSummary>& colls, const RunInfo& info) {
  if (info.peers.empty() || colls.empty()) return;
  std::string word = peerWord(info);
  std::fprintf(out, "# Summary, %d ranks: average busbw (GB/s) and geometric mean of %s time / weft time\n",
               info.nranks, word.c_str());
  std::fprintf(out, "# %-14s %10s", "collective", "weft");
  for (const PeerInfo& p : info.peers) std::fprintf(out, " %10s", p.library.c_str());
  for (const PeerInfo& p : info.peers)
    std::fprintf(out, " %10s", info.peers.size() == 1 ? "ratio" : (p.library + "/weft").c_str());
  std::fprintf(out, "\n");
  for (const CollSummary& c : colls) {
    std::fprintf(out, "# %-14s %10.3f", c.desc->name, c.weft.avgBusBw);
    for (const PeerSummary& p : c.peers) std::fprintf(out, " %10.3f", p.avgBusBw);
    for (const PeerSummary& p : c.peers) {
      char ratio[32] = "n/a";
      if (p.ratios) std::snprintf(ratio, sizeof ratio, "%.3f", p.geomeanRatio);
      std::fprintf(out, " %10s", ratio);
    }
    std::fprintf(out, "\n");
  }
  std::fflush(out);
}

namespace {

// Fusion's blocks: a Weft form is time, min-max and launches ("  %8s  %17s  %6s", 37 characters); a peer is
// time and min-max (29); each ratio "  %7s".
constexpr size_t kFusionWeftBlock = 37, kFusionPeerBlock = 29;

std::string centeredIn(const std::string& title, size_t blockWidth) {
  size_t left = title.size() + 2 < blockWidth ? (blockWidth - 2 - title.size()) / 2 : 0;
  std::string text = "  " + std::string(left, ' ') + title;
  return text + std::string(text.size() < blockWidth ? blockWidth - text.size() : 0, ' ');
}

void printFusionMeasure(std::FILE* out, const Measure& m, const LaunchStats* stats) {
  if (!m.ran) {
    std::fprintf(out, "  %8s  %17s", "n/a", "");
  } else {
    std::string spread = timeString(m.minUs, false) + "-" + timeString(m.maxUs, false);
    std::fprintf(out, "  %8s  %17s", timeString(m.timeUs).c_str(), spread.c_str());
  }
  if (!stats) return;
  std::string launches = "-";
  if (stats->measured) {
    launches = std::to_string(stats->launches);
    // Ranks that disagree show their range: that is a bug worth seeing.
    if (!stats->agree()) launches = std::to_string(stats->launchesMin) + "-" + launches;
  }
  std::fprintf(out, "  %6s", launches.c_str());
}

std::string ratioString(double ratio, const char* format = "%.3g") {
  if (!(ratio > 0)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, format, ratio);
  return text;
}

std::string fusionWrongString(const FusionRow& row) {
  std::string text = wrongString(row.fused);
  for (const Measure* m : {&row.unfused, &row.single}) {
    text += '/';
    text += wrongString(*m);
  }
  for (const Measure& m : row.peers) {
    text += '/';
    text += wrongString(m);
  }
  return text;
}

}  // namespace

void printFusionHeader(std::FILE* out, const RunInfo& info) {
  std::fprintf(out, "#\n# Fusion: N allreduce calls of `bytes` each in one group (weftGroupStart/End), on N separately "
                    "allocated buffer pairs\n");
  std::fprintf(out, "#   fused: weftCommSetFusion(allreduce, auto)  unfused: weftFusionOff  single: one weftAllReduce "
                    "of N*bytes");
  for (const PeerInfo& peer : info.peers) std::fprintf(out, "  %s: N calls", peer.library.c_str());
  std::fprintf(out, "\n#   time: per group of N calls (single: per call), median over rounds (min-max of rounds); "
                    "launch: collectivesLaunched per group (weftCommGetStats)\n");
  std::fprintf(out, "#   ratios: u/f = unfused / fused, f/s = fused / single");
  for (size_t p = 0; p < info.peers.size(); ++p)
    std::fprintf(out, ", %c/f = %s / fused", info.peers[p].library.at(0), info.peers[p].library.c_str());
  std::fprintf(out, "\n#\n");
  std::string titles = centeredIn("fused (auto)", kFusionWeftBlock) + centeredIn("unfused (off)", kFusionWeftBlock) +
                       centeredIn("single (N*bytes)", kFusionWeftBlock);
  for (const PeerInfo& peer : info.peers) titles += centeredIn(peer.library + " (N calls)", kFusionPeerBlock);
  titles.erase(titles.find_last_not_of(' ') + 1);
  std::fprintf(out, "#%37s%s\n", "", titles.c_str());
  std::fprintf(out, "#%7s  %10s  %8s  %6s", "N", "bytes", "type", "redop");
  for (int form = 0; form < 3; ++form) std::fprintf(out, "  %8s  %17s  %6s", "time", "min-max", "launch");
  for (size_t p = 0; p < info.peers.size(); ++p) std::fprintf(out, "  %8s  %17s", "time", "min-max");
  std::fprintf(out, "  %7s  %7s", "ratio", "ratio");
  for (size_t p = 0; p < info.peers.size(); ++p) std::fprintf(out, "  %7s", "ratio");
  std::fprintf(out, "  %s\n", "#wrong");
  std::fprintf(out, "#%7s  %10s  %8s  %6s", "", "(B)", "", "");
  for (int form = 0; form < 3; ++form) std::fprintf(out, "  %8s  %17s  %6s", "(us)", "(us, rounds)", "");
  for (size_t p = 0; p < info.peers.size(); ++p) std::fprintf(out, "  %8s  %17s", "(us)", "(us, rounds)");
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
  std::fprintf(out, "%8d  %10zu  %8s  %6s", row.fusionCase.calls, row.bytes, typeName(row.type), opName(row.op));
  printFusionMeasure(out, row.fused, &row.fusedStats);
  printFusionMeasure(out, row.unfused, &row.unfusedStats);
  printFusionMeasure(out, row.single, &row.singleStats);
  for (const Measure& m : row.peers) printFusionMeasure(out, m, nullptr);
  std::fprintf(out, "  %7s  %7s", ratioString(row.unfusedOverFused()).c_str(),
               ratioString(row.fusedOverSingle()).c_str());
  std::string skipped;
  for (size_t p = 0; p < row.peers.size(); ++p) {
    std::fprintf(out, "  %7s", ratioString(row.peerOverFused(p)).c_str());
    const Measure& m = row.peers[p];
    if (!m.ran && !m.skipped.empty()) {
      if (!skipped.empty()) skipped += "; ";
      skipped += p < info.peers.size() ? info.peers[p].library + ": " + m.skipped : m.skipped;
    }
  }
  std::fprintf(out, "  %6s", fusionWrongString(row).c_str());
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
    for (size_t p = 0; p < row.peers.size() && p < peers.size(); ++p) peers[p] += std::max(row.peers[p].wrong, 0LL);
  }
  perForm = "fused " + std::to_string(fused) + ", unfused " + std::to_string(unfused) + ", single " +
            std::to_string(single);
  for (size_t p = 0; p < peers.size(); ++p) perForm += ", " + info.peers[p].library + " " + std::to_string(peers[p]);
  std::fprintf(out, "# Out of bounds values : %lld %s (%s)\n", wrong, wrong == 0 ? "OK" : "FAILED", perForm.c_str());
  // Per case: the ratios with the targets the fusion work is held to, and the launches per group.
  for (const FusionRow& row : rows) {
    std::fprintf(out, "# %d x %zu B %s %s: fused/single %s (target <= 1.3: %s), unfused/fused %s", row.fusionCase.calls,
                 row.bytes, typeName(row.type), opName(row.op), ratioString(row.fusedOverSingle(), "%.3f").c_str(),
                 row.fusedOverSingle() <= 0 ? "n/a" : row.fusedOverSingle() <= 1.3 ? "met" : "missed",
                 ratioString(row.unfusedOverFused(), "%.3f").c_str());
    for (size_t p = 0; p < row.peers.size() && p < info.peers.size(); ++p) {
      double r = row.peerOverFused(p);
      std::fprintf(out, ", %s/fused %s", info.peers[p].library.c_str(), ratioString(r, "%.3f").c_str());
      if (info.peers[p].library == "mpi") std::fprintf(out, " (target >= 10: %s)", r <= 0 ? "n/a" : r >= 10 ? "met" : "missed");
    }
    std::fprintf(out, "; launches per group: fused %lld, unfused %lld, single %lld (of %d calls)\n",
                 row.fusedStats.launches, row.unfusedStats.launches, row.singleStats.launches, row.fusionCase.calls);
  }
  std::fprintf(out, "#\n");
  std::fflush(out);
}

namespace {

// --plan's blocks: a Weft form is as fusion's (time, min-max, launches: 37 characters); a peer is time and
// min-max (29); the plan's info "  %5s  %5s  %6s  %5s  %4s  %8s" (45).
constexpr size_t kPlanInfoBlock = 45;

std::string planWrongString(const PlanRow& row) {
  std::string text = wrongString(row.plan);
  for (const Measure* m : {&row.eager, &row.planGroup, &row.eagerGroup}) {
    text += '/';
    text += wrongString(*m);
  }
  for (const Measure& m : row.peers) {
    text += '/';
    text += wrongString(m);
  }
  return text;
}

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
  std::fprintf(out, "#\n# Plans: N allreduce calls of `bytes` each on N separately allocated buffer pairs (weftPlanBegin/End "
                    "record them once per case)\n");
  std::fprintf(out, "#   plan: one weftPlanLaunch of the N recorded plain calls  eager: the N calls issued directly  "
                    "plan-grp/eager-grp: the same with the N calls in weftGroupStart/End");
  for (const PeerInfo& peer : info.peers) std::fprintf(out, "  %s: N calls", peer.library.c_str());
  std::fprintf(out, "\n#   time: per launch of N calls, median over rounds (min-max of rounds); launch: "
                    "collectivesLaunched per launch (weftCommGetStats)\n");
  std::fprintf(out, "#   ratios: p/e = plan / eager, e/p = eager / plan, pg/eg = plan-group / eager-group");
  for (size_t p = 0; p < info.peers.size(); ++p)
    std::fprintf(out, ", %c/p = %s / plan", info.peers[p].library.at(0), info.peers[p].library.c_str());
  std::fprintf(out, "\n#   plan info (weftPlanGetInfo of the plain plan): ops, subgraphs, ops reused, streams without "
                    "reuse, streams used, resource bytes\n");
  std::fprintf(out, "#   mismatch: elements whose bits differ between the plan's and the eager calls' outputs "
                    "(plain/group; -c 1)\n#\n");
  std::string titles = centeredIn("plan", kFusionWeftBlock) + centeredIn("eager", kFusionWeftBlock) +
                       centeredIn("plan-group", kFusionWeftBlock) + centeredIn("eager-group", kFusionWeftBlock);
  for (const PeerInfo& peer : info.peers) titles += centeredIn(peer.library + " (N calls)", kFusionPeerBlock);
  titles += std::string(9 * (3 + info.peers.size()), ' ');
  titles += centeredIn("plan info", kPlanInfoBlock);
  titles.erase(titles.find_last_not_of(' ') + 1);
  std::fprintf(out, "#%37s%s\n", "", titles.c_str());
  std::fprintf(out, "#%7s  %10s  %8s  %6s", "N", "bytes", "type", "redop");
  for (int form = 0; form < 4; ++form) std::fprintf(out, "  %8s  %17s  %6s", "time", "min-max", "launch");
  for (size_t p = 0; p < info.peers.size(); ++p) std::fprintf(out, "  %8s  %17s", "time", "min-max");
  std::fprintf(out, "  %7s  %7s  %7s", "ratio", "ratio", "ratio");
  for (size_t p = 0; p < info.peers.size(); ++p) std::fprintf(out, "  %7s", "ratio");
  std::fprintf(out, "  %5s  %5s  %6s  %5s  %4s  %8s", "ops", "subgr", "reused", "str0", "str", "resB");
  std::fprintf(out, "  %-14s  %s\n", "#wrong", "mismatch");
  std::fprintf(out, "#%7s  %10s  %8s  %6s", "", "(B)", "", "");
  for (int form = 0; form < 4; ++form) std::fprintf(out, "  %8s  %17s  %6s", "(us)", "(us, rounds)", "");
  for (size_t p = 0; p < info.peers.size(); ++p) std::fprintf(out, "  %8s  %17s", "(us)", "(us, rounds)");
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
  printFusionMeasure(out, row.plan, &row.planStats);
  printFusionMeasure(out, row.eager, &row.eagerStats);
  printFusionMeasure(out, row.planGroup, &row.planGroupStats);
  printFusionMeasure(out, row.eagerGroup, &row.eagerGroupStats);
  for (const Measure& m : row.peers) printFusionMeasure(out, m, nullptr);
  std::fprintf(out, "  %7s  %7s  %7s", ratioString(row.planOverEager()).c_str(),
               ratioString(row.eagerOverPlan()).c_str(), ratioString(row.planGroupOverEagerGroup()).c_str());
  std::string skipped;
  for (size_t p = 0; p < row.peers.size(); ++p) {
    std::fprintf(out, "  %7s", ratioString(row.peerOverPlan(p)).c_str());
    const Measure& m = row.peers[p];
    if (!m.ran && !m.skipped.empty()) {
      if (!skipped.empty()) skipped += "; ";
      skipped += p < info.peers.size() ? info.peers[p].library + ": " + m.skipped : m.skipped;
    }
  }
  const PlanInfo& i = row.info;
  std::fprintf(out, "  %5d  %5d  %6d  %5d  %4d  %8zu", i.numOps, i.numSubgraphs, i.opsReused, i.streamsWithoutReuse,
               i.streamsUsed, i.resourceBytes);
  std::string mismatch = mismatchString(row.mismatches) + "/" + mismatchString(row.groupMismatches);
  std::fprintf(out, "  %-14s  %s", planWrongString(row).c_str(), mismatch.c_str());
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
    for (size_t p = 0; p < row.peers.size() && p < peers.size(); ++p) peers[p] += std::max(row.peers[p].wrong, 0LL);
    compared = compared || row.mismatches >= 0;
    mismatches += std::max(row.mismatches, 0LL);
    groupMismatches += std::max(row.groupMismatches, 0LL);
  }
  std::string perForm = "plan " + std::to_string(plan) + ", eager " + std::to_string(eager) + ", plan-group " +
                        std::to_string(planGroup) + ", eager-group " + std::to_string(eagerGroup);
  for (size_t p = 0; p < peers.size(); ++p) perForm += ", " + info.peers[p].library + " " + std::to_string(peers[p]);
  std::fprintf(out, "# Out of bounds values : %lld %s (%s)\n", wrong, wrong == 0 ? "OK" : "FAILED", perForm.c_str());
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
                    r <= 0 ? "n/a" : r <= kPlanOverEagerTarget ? "met" : "missed");
      target = text;
    }
    std::fprintf(out, "# %d x %zu B %s %s: plan/eager %s%s, eager/plan %s, plan-group/eager-group %s",
                 row.planCase.calls, row.bytes, typeName(row.type), opName(row.op), ratioString(r, "%.3f").c_str(),
                 target.c_str(), ratioString(row.eagerOverPlan(), "%.3f").c_str(),
                 ratioString(row.planGroupOverEagerGroup(), "%.3f").c_str());
    for (size_t p = 0; p < row.peers.size() && p < info.peers.size(); ++p)
      std::fprintf(out, ", %s/plan %s", info.peers[p].library.c_str(), ratioString(row.peerOverPlan(p), "%.3f").c_str());
    std::fprintf(out, "; launches per launch: plan %lld, eager %lld, plan-group %lld, eager-group %lld (of %d calls)\n",
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
                 compileFormString(compile.group, compile.repetitions, "in one group").c_str(), kPlanCompileTargetMs,
                 !f.ran || !compile.group.ran ? "n/a" : worst < kPlanCompileTargetMs ? "met" : "missed");
    std::fprintf(out, "#   weftPlanBegin + %d allreduce calls of %zu B %s %s + weftPlanEnd, median of %d (max across ranks)",
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
