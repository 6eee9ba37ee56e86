#include "report.h"

#include <algorithm>
#include <string>

#include "report_format.h"
#include "types.h"

namespace commperf {

namespace {

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
std::string footerNumber(double value) {
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
  if (options.gapUs > 0) {
    std::fprintf(out, "# Calls alone: a barrier and %d us of spinning before each timed call\n", options.gapUs);
  }
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
    std::string busBw = "weft " + footerNumber(coll.weft.avgBusBw);
    for (const PeerSummary& p : coll.peers) {
      perLibrary += ", " + p.library + " " + std::to_string(p.wrong);
      busBw += "  " + p.library + " " + footerNumber(p.avgBusBw);
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

}  // namespace commperf
