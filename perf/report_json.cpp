// --json: every figure of the run in one document (schema in perf/README.md; checked by
// tests/perf/check_json.py). Numbers are printed with enough digits to round-trip the table's.
#include <cmath>
#include <cstdio>
#include <string>

#include "report.h"
#include "types.h"

namespace commperf {

namespace {

std::string jsonString(const std::string& text) {
  std::string s = "\"";
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (u < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", u);
      s += escape;
    } else {
      s += c;
    }
  }
  return s + "\"";
}

std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string jsonMeasure(const Measure& m) {
  if (!m.ran) return "null";
  std::string rounds;
  for (double us : m.roundUs) {
    if (!rounds.empty()) rounds += ", ";
    rounds += number(us);
  }
  std::string wrong = m.wrong < 0 ? "null" : std::to_string(m.wrong);
  return "{\"time_us\": " + number(m.timeUs) + ", \"time_us_min\": " + number(m.minUs) +
         ", \"time_us_max\": " + number(m.maxUs) + ", \"algbw\": " + number(m.algBw) +
         ", \"busbw\": " + number(m.busBw) + ", \"wrong\": " + wrong + ", \"round_times_us\": [" + rounds + "]}";
}

std::string jsonLibrary(const LibrarySummary& s) {
  return "{\"avg_busbw\": " + number(s.avgBusBw) + ", \"peak_busbw\": " + number(s.peakBusBw) +
         ", \"wrong\": " + std::to_string(s.wrong) + ", \"measured\": " + std::to_string(s.measured) + "}";
}

std::string jsonBounds(const std::optional<Bounds>& b) {
  if (!b) return "null";
  return "{\"bytes\": " + std::to_string(b->bytes) + ", \"threads\": " + std::to_string(b->threads) +
         ", \"memcpy_1thread_gbps\": " + number(b->memcpy1) + ", \"memcpy_all_gbps\": " + number(b->memcpyAll) +
         ", \"add_1thread_gbps\": " + number(b->add1) + ", \"add_all_gbps\": " + number(b->addAll) +
         ", \"pingpong_roundtrip_us\": " + (b->pingPongUs >= 0 ? number(b->pingPongUs) : "null") + "}";
}

std::string orNull(const std::string& text) { return text.empty() ? "null" : jsonString(text); }

}  // namespace

bool writeJson(const std::string& path, const Options& options, const RunInfo& info, const Results& results) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  bool peer = info.peer != "none";
  std::fprintf(f, "{\n  \"tool\": \"commperf\",\n  \"schema\": 2,\n");
  std::fprintf(f, "  \"command_line\": %s,\n", jsonString(options.commandLine).c_str());
  std::fprintf(f, "  \"ranks\": %d,\n  \"hosts\": [", info.nranks);
  for (size_t i = 0; i < info.rankLines.size(); ++i)
    std::fprintf(f, "%s%s", i ? ", " : "", jsonString(info.rankLines[i]).c_str());
  std::fprintf(f, "],\n");
  std::fprintf(f, "  \"versions\": {\"weft\": %s, \"weft_code\": %d, \"mpi\": %s, \"peer\": %s},\n",
               jsonString(info.weftVersion).c_str(), info.version, jsonString(info.mpiVersion).c_str(),
               orNull(info.peerVersion).c_str());
  std::fprintf(f, "  \"weft\": {\"plugins\": %s, \"algo\": %s},\n", jsonString(info.weftPlugins).c_str(),
               jsonString(info.weftAlgo).c_str());
  std::fprintf(f, "  \"peer\": %s,\n  \"peer_transport\": %s,\n", peer ? jsonString(info.peer).c_str() : "null",
               orNull(info.peerTransport).c_str());
  std::fprintf(f,
               "  \"options\": {\"minbytes\": %zu, \"maxbytes\": %zu, \"stepfactor\": %zu, \"stepbytes\": %zu, "
               "\"iters\": %d, \"rounds\": %d, \"iters_per_round\": %d, \"warmup_iters\": %d, \"check\": %d, "
               "\"root\": %d, \"gloo_allreduce\": %s},\n",
               options.minBytes, options.maxBytes, options.stepFactor, options.stepBytes, options.iters,
               options.rounds, options.itersPerRound(), options.warmupIters, options.check ? 1 : 0, options.root,
               jsonString(options.glooAllreduce).c_str());
  std::fprintf(f, "  \"bounds\": %s,\n", jsonBounds(info.bounds).c_str());
  std::fprintf(f, "  \"results\": [");
  for (size_t i = 0; i < results.rows.size(); ++i) {
    const Row& row = results.rows[i];
    std::string ratio = row.ratio() > 0 ? number(row.ratio()) : "null";
    std::fprintf(f,
                 "%s\n    {\"collective\": \"%s\", \"size\": %zu, \"count\": %zu, \"type\": \"%s\", "
                 "\"redop\": \"%s\", \"root\": %d,\n     \"out_of_place\": %s,\n     \"in_place\": %s,\n"
                 "     \"peer\": %s,\n     \"peer_skipped\": %s, \"ratio\": %s}",
                 i ? "," : "", row.desc->name, row.size, row.count, typeName(row.type),
                 row.op ? opName(*row.op) : "none", row.root, jsonMeasure(row.outOfPlace).c_str(),
                 jsonMeasure(row.inPlace).c_str(), jsonMeasure(row.peer).c_str(), orNull(row.peer.skipped).c_str(),
                 ratio.c_str());
  }
  std::fprintf(f, "\n  ],\n  \"summary\": [");
  for (size_t i = 0; i < results.colls.size(); ++i) {
    const CollSummary& c = results.colls[i];
    std::string ratio = c.ratios ? number(c.geomeanRatio) : "null";
    std::fprintf(f,
                 "%s\n    {\"collective\": \"%s\", \"weft_algorithm\": %s, \"peer_algorithm\": %s,\n"
                 "     \"weft\": %s,\n     \"peer\": %s,\n     \"geomean_ratio\": %s, \"ratios\": %d}",
                 i ? "," : "", c.desc->name, jsonString(c.weftAlgorithm).c_str(), orNull(c.peerAlgorithm).c_str(),
                 jsonLibrary(c.weft).c_str(), peer ? jsonLibrary(c.peer).c_str() : "null", ratio.c_str(),
                 c.ratios);
  }
  std::fprintf(f, "\n  ],\n  \"out_of_bounds\": %lld\n}\n", results.totalWrong);
  bool ok = !std::ferror(f);
  return std::fclose(f) == 0 && ok;
}

}  // namespace commperf
