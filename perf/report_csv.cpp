// --csv: one line per size, collective, library and form (long format, easy to filter and pivot; each peer
// has its own lines, named in the library column). The run's context (command line, versions, settings,
// bounds) comes first and the nccl-tests-like footer last, both as '#' comment lines, which CSV readers skip
// with comment='#'.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "report.h"
#include "types.h"

namespace commperf {

namespace {

// RFC 4180: quote a field with a comma, quote or newline; double the quotes inside.
std::string field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string s = "\"";
  for (char c : text) s += c == '"' ? std::string("\"\"") : std::string(1, c);
  return s + "\"";
}

std::string csvNumber(double value) {
  if (!std::isfinite(value)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// Comment lines must stay one line each.
std::string oneLine(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return text;
}

// ratio: the peer's time / Weft's time, 0 for Weft's own lines (and when either is missing).
void writeLine(std::FILE* f, const Row& row, const RunInfo& info, const std::string& library,
               const std::string& algorithm, const char* form, const Measure& m, double ratio) {
  std::string rounds;
  for (double us : m.roundUs) {
    if (!rounds.empty()) rounds += ';';
    rounds += csvNumber(us);
  }
  std::fprintf(f, "%s,%s,%s,%s,%zu,%zu,%s,%s,%d,%d,", row.desc->name, library.c_str(), field(algorithm).c_str(),
               form, row.size, row.count, typeName(row.type), row.op ? opName(*row.op) : "none", row.root,
               info.nranks);
  if (m.ran) {
    const std::string wrong = m.wrong < 0 ? "" : std::to_string(m.wrong);
    std::fprintf(f, "%s,%s,%s,%s,%s,%s,%s,%s,\n", csvNumber(m.timeUs).c_str(), csvNumber(m.minUs).c_str(),
                 csvNumber(m.maxUs).c_str(), csvNumber(m.algBw).c_str(), csvNumber(m.busBw).c_str(), wrong.c_str(),
                 ratio > 0 ? csvNumber(ratio).c_str() : "", rounds.c_str());
  } else {
    std::fprintf(f, ",,,,,,,,%s\n", field(m.skipped).c_str());
  }
}

}  // namespace

bool writeCsv(const std::string& path, const Options& options, const RunInfo& info, const Results& results) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::string peerList;
  for (const PeerInfo& p : info.peers) peerList += (peerList.empty() ? "" : ",") + p.library;
  std::fprintf(f, "# tool: commperf\n# command_line: %s\n", oneLine(options.commandLine).c_str());
  std::fprintf(f, "# ranks: %d\n# weft_version: %s\n# mpi_version: %s\n", info.nranks, info.weftVersion.c_str(),
               oneLine(info.mpiVersion).c_str());
  std::fprintf(f, "# weft_plugins: %s\n# weft_algo: %s\n", info.weftPlugins.c_str(), info.weftAlgo.c_str());
  std::fprintf(f, "# peers: %s\n", info.peers.empty() ? "none" : peerList.c_str());
  for (const PeerInfo& p : info.peers) {
    std::fprintf(f, "# peer_version %s: %s\n", p.library.c_str(), oneLine(p.version).c_str());
    if (!p.transport.empty()) std::fprintf(f, "# peer_transport %s: %s\n", p.library.c_str(), p.transport.c_str());
  }
  std::fprintf(f, "# iters: %d rounds: %d iters_per_round: %d warmup_iters: %d check: %d\n", options.iters,
               options.rounds, options.itersPerRound(), options.warmupIters, options.check ? 1 : 0);
  for (const std::string& line : info.rankLines) std::fprintf(f, "# host: %s\n", line.c_str());
  if (const auto& b = info.bounds)
    std::fprintf(f,
                 "# bounds: bytes %zu threads %d memcpy_1thread_gbps %s memcpy_all_gbps %s add_1thread_gbps %s "
                 "add_all_gbps %s pingpong_roundtrip_us %s\n",
                 b->bytes, b->threads, csvNumber(b->memcpy1).c_str(), csvNumber(b->memcpyAll).c_str(),
                 csvNumber(b->add1).c_str(), csvNumber(b->addAll).c_str(),
                 b->pingPongUs >= 0 ? csvNumber(b->pingPongUs).c_str() : "failed");
  std::fprintf(
      f,
      "collective,library,algorithm,form,size,count,type,redop,root,ranks,time_us,time_us_min,time_us_max,"
      "algbw_gbps,busbw_gbps,wrong,ratio,round_times_us,skipped\n");
  for (const Row& row : results.rows) {
    const auto found = std::find_if(results.colls.begin(), results.colls.end(),
                                    [&](const CollSummary& c) { return c.desc == row.desc; });
    const CollSummary* coll = found == results.colls.end() ? nullptr : &*found;
    std::string weftAlgorithm = coll ? coll->weftAlgorithm : "default";
    writeLine(f, row, info, "weft", weftAlgorithm, "out_of_place", row.outOfPlace, 0);
    if (row.inPlace.ran) writeLine(f, row, info, "weft", weftAlgorithm, "in_place", row.inPlace, 0);
    for (size_t p = 0; p < row.peers.size() && p < info.peers.size(); ++p) {
      std::string algorithm = coll && p < coll->peers.size() ? coll->peers[p].algorithm : "";
      writeLine(f, row, info, info.peers[p].library, algorithm, "out_of_place", row.peers[p], row.ratio(p));
      if (p < row.peersInPlace.size() && row.peersInPlace[p].ran)
        writeLine(f, row, info, info.peers[p].library, algorithm, "in_place", row.peersInPlace[p],
                  row.inPlaceRatio(p));
    }
  }
  for (const CollSummary& c : results.colls) {
    std::fprintf(f, "# avg_busbw %s weft: %s GB/s (peak %s, wrong %lld)\n", c.desc->name,
                 csvNumber(c.weft.avgBusBw).c_str(), csvNumber(c.weft.peakBusBw).c_str(), c.weft.wrong);
    for (const PeerSummary& p : c.peers)
      std::fprintf(f, "# avg_busbw %s %s: %s GB/s (peak %s, wrong %lld)\n", c.desc->name, p.library.c_str(),
                   csvNumber(p.avgBusBw).c_str(), csvNumber(p.peakBusBw).c_str(), p.wrong);
    for (const PeerSummary& p : c.peers)
      if (p.ratios)
        std::fprintf(f, "# geomean_ratio %s %s/weft: %s over %d sizes\n", c.desc->name, p.library.c_str(),
                     csvNumber(p.geomeanRatio).c_str(), p.ratios);
  }
  std::fprintf(f, "# out_of_bounds: %lld\n", results.totalWrong);
  bool ok = !std::ferror(f);
  return std::fclose(f) == 0 && ok;
}

}  // namespace commperf
