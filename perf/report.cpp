#include "report.h"

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
  if (info.peer != "none") {
    std::fprintf(out, "# Peer: %s, %s", info.peer.c_str(), info.peerVersion.c_str());
    if (!info.peerTransport.empty()) std::fprintf(out, ", %s", info.peerTransport.c_str());
    std::fprintf(out, "\n# Times: median over rounds (min-max of rounds); ratio = %s time / weft time\n",
                 info.peer.c_str());
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
  if (info.peer != "none") std::fprintf(out, "    %s: %s", info.peer.c_str(), coll.peerAlgorithm.c_str());
  std::fprintf(out, "\n#\n");
  if (info.peer == "none") {
    std::fprintf(out, "#%73s%32s\n", "out-of-place", "in-place          ");
    std::fprintf(out,
                 "#       size         count      type   redop    root"
                 "     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
    std::fprintf(out,
                 "#        (B)    (elements)                            "
                 "   (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
    return;
  }
  // Each library's block is as wide as printSideBySide's output: "  %8s  %17s  %7s" = 38 characters.
  auto centered = [](const std::string& title) {
    size_t width = 36, left = title.size() < width ? (width - title.size()) / 2 : 0;
    std::string line = "  " + std::string(left, ' ') + title;
    return line + std::string(line.size() < 38 ? 38 - line.size() : 0, ' ');
  };
  std::string titles = centered("weft, out-of-place") + centered(info.peer + ", out-of-place");
  titles.erase(titles.find_last_not_of(' ') + 1);
  std::fprintf(out, "#%51s%s\n", "", titles.c_str());
  std::fprintf(out, "#%11s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root");
  for (int side = 0; side < 2; ++side) std::fprintf(out, "  %8s  %17s  %7s", "time", "min-max", "busbw");
  std::fprintf(out, "  %7s  %s\n", "ratio", "#wrong");
  std::fprintf(out, "#%11s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "");
  for (int side = 0; side < 2; ++side) std::fprintf(out, "  %8s  %17s  %7s", "(us)", "(us, rounds)", "(GB/s)");
  std::fprintf(out, "  %7s  %s\n", "(p/w)", "(w/p)");
}

void printRow(std::FILE* out, const Row& row, const RunInfo& info) {
  std::fprintf(out, "%12zu  %12zu  %8s  %6s  %6d", row.size, row.count, typeName(row.type),
               row.op ? opName(*row.op) : "none", row.root);
  if (info.peer == "none") {
    printMeasure(out, row.outOfPlace);
    printMeasure(out, row.inPlace);
  } else {
    printSideBySide(out, row.outOfPlace);
    printSideBySide(out, row.peer);
    if (row.ratio() > 0)
      std::fprintf(out, "  %7.3g", row.ratio());
    else
      std::fprintf(out, "  %7s", "n/a");
    std::string wrong = wrongString(row.outOfPlace) + "/" + wrongString(row.peer);
    std::fprintf(out, "  %6s", wrong.c_str());
    if (!row.peer.ran && !row.peer.skipped.empty()) std::fprintf(out, "  (%s)", row.peer.skipped.c_str());
  }
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printCollFooter(std::FILE* out, const CollSummary& coll, const RunInfo& info) {
  long long wrong = coll.weft.wrong + coll.peer.wrong;
  if (info.peer == "none") {
    std::fprintf(out, "# Out of bounds values : %lld %s\n", wrong, wrong == 0 ? "OK" : "FAILED");
    std::fprintf(out, "# Avg bus bandwidth    : %g \n", coll.weft.avgBusBw);
  } else {
    const char* peer = info.peer.c_str();
    std::fprintf(out, "# Out of bounds values : %lld %s (weft %lld, %s %lld)\n", wrong,
                 wrong == 0 ? "OK" : "FAILED", coll.weft.wrong, peer, coll.peer.wrong);
    std::fprintf(out, "# Avg bus bandwidth    : weft %g  %s %g \n", coll.weft.avgBusBw, peer, coll.peer.avgBusBw);
    if (coll.ratios)
      std::fprintf(out, "# %-21s: %.3f (geometric mean over %d sizes; > 1: Weft is faster)\n",
                   ("Time ratio " + info.peer + "/weft").c_str(), coll.geomeanRatio, coll.ratios);
  }
  if (info.bounds) {
    double bound = info.bounds->memcpy1;
    std::fprintf(out, "# Peak bus bandwidth   : weft %.3g GB/s (%.0f%% of 1-thread memcpy)", coll.weft.peakBusBw,
                 percentOf(coll.weft.peakBusBw, bound));
    if (info.peer != "none")
      std::fprintf(out, "  %s %.3g GB/s (%.0f%%)", info.peer.c_str(), coll.peer.peakBusBw,
                   percentOf(coll.peer.peakBusBw, bound));
    std::fprintf(out, "\n");
  }
  std::fprintf(out, "#\n");
  std::fflush(out);
}

void printSummary(std::FILE* out, const std::vector<CollSummary>& colls, const RunInfo& info) {
  if (info.peer == "none" || colls.empty()) return;
  const char* peer = info.peer.c_str();
  std::fprintf(out, "# Summary, %d ranks: average busbw (GB/s) and geometric mean of %s time / weft time\n",
               info.nranks, peer);
  std::fprintf(out, "# %-14s %10s %10s %10s\n", "collective", "weft", peer, "ratio");
  for (const CollSummary& c : colls) {
    char ratio[32] = "n/a";
    if (c.ratios) std::snprintf(ratio, sizeof ratio, "%.3f", c.geomeanRatio);
    std::fprintf(out, "# %-14s %10.3f %10.3f %10s\n", c.desc->name, c.weft.avgBusBw, c.peer.avgBusBw, ratio);
  }
  std::fflush(out);
}

}  // namespace commperf
