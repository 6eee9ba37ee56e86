// --json: every figure of the run in one document (schema 3 in perf/README.md; checked by
// tests/perf/check_json.py). Numbers are printed with enough digits to round-trip the table's. Peers are
// keyed by library in every result and summary, so one file holds any number of them.
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

std::string jsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string orNull(const std::string& text) { return text.empty() ? "null" : jsonString(text); }

std::string jsonMeasure(const Measure& m) {
  if (!m.ran) return "null";
  std::string rounds;
  for (double us : m.roundUs) {
    if (!rounds.empty()) rounds += ", ";
    rounds += jsonNumber(us);
  }
  std::string wrong = m.wrong < 0 ? "null" : std::to_string(m.wrong);
  return "{\"time_us\": " + jsonNumber(m.timeUs) + ", \"time_us_min\": " + jsonNumber(m.minUs) +
         ", \"time_us_max\": " + jsonNumber(m.maxUs) + ", \"algbw\": " + jsonNumber(m.algBw) +
         ", \"busbw\": " + jsonNumber(m.busBw) + ", \"wrong\": " + wrong + ", \"round_times_us\": [" + rounds +
         "]}";
}

// The members of a library's footer figures, without the braces (a peer's block adds its own).
std::string libraryMembers(const LibrarySummary& s) {
  return "\"avg_busbw\": " + jsonNumber(s.avgBusBw) + ", \"peak_busbw\": " + jsonNumber(s.peakBusBw) +
         ", \"wrong\": " + std::to_string(s.wrong) + ", \"measured\": " + std::to_string(s.measured);
}

std::string jsonPeerSummary(const PeerSummary& s) {
  return "{\"algorithm\": " + jsonString(s.algorithm) + ", " + libraryMembers(s) +
         ", \"geomean_ratio\": " + (s.ratios ? jsonNumber(s.geomeanRatio) : "null") +
         ", \"ratios\": " + std::to_string(s.ratios) + "}";
}

// A result's peers, keyed by library in --peer order: the measure (null when skipped), why it was skipped
// (null when it ran) and the ratio peer time / Weft time.
std::string jsonRowPeers(const Row& row, const RunInfo& info) {
  static const Measure kNotRun;
  auto ratioText = [](double ratio) { return ratio > 0 ? jsonNumber(ratio) : std::string("null"); };
  std::string text = "{";
  for (size_t p = 0; p < row.peers.size() && p < info.peers.size(); ++p) {
    const Measure& inPlace = p < row.peersInPlace.size() ? row.peersInPlace[p] : kNotRun;
    text += std::string(p ? ",\n       " : "") + jsonString(info.peers[p].library) +
            ": {\"out_of_place\": " + jsonMeasure(row.peers[p]) +
            ", \"skipped\": " + orNull(row.peers[p].skipped) + ", \"ratio\": " + ratioText(row.ratio(p)) +
            ",\n         \"in_place\": " + jsonMeasure(inPlace) +
            ", \"in_place_ratio\": " + ratioText(row.inPlaceRatio(p)) + "}";
  }
  return text + "}";
}

// The context's list of peers: library, version, transport and the call or algorithm per collective.
std::string jsonPeers(const RunInfo& info, const Results& results) {
  std::string text = "[";
  for (size_t p = 0; p < info.peers.size(); ++p) {
    const PeerInfo& peer = info.peers[p];
    std::string algorithms;
    for (const CollSummary& c : results.colls) {
      if (p >= c.peers.size()) continue;
      if (!algorithms.empty()) algorithms += ", ";
      algorithms += std::string("\"") + c.desc->name + "\": " + jsonString(c.peers[p].algorithm);
    }
    text += std::string(p ? "," : "") + "\n    {\"library\": " + jsonString(peer.library) +
            ", \"version\": " + jsonString(peer.version) + ", \"transport\": " + orNull(peer.transport) +
            ",\n     \"algorithms\": {" + algorithms + "}}";
  }
  return text + (info.peers.empty() ? "]" : "\n  ]");
}

// A Weft form of --fusion: the measure with the launches per group (weftCommGetStats deltas).
std::string jsonFusionForm(const Measure& m, const LaunchStats& stats) {
  std::string measure = jsonMeasure(m);
  if (measure == "null") return measure;
  measure.pop_back();  // the closing brace
  if (!stats.measured) return measure + ", \"launches\": null, \"ops\": null, \"bytes_fused\": null}";
  return measure + ", \"launches\": " + std::to_string(stats.launches) +
         ", \"launches_min\": " + std::to_string(stats.launchesMin) + ", \"ops\": " + std::to_string(stats.ops) +
         ", \"bytes_fused\": " + std::to_string(stats.bytesFused) + "}";
}

// ["a", "b"].
std::string jsonStrings(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += std::string(i ? ", " : "") + jsonString(items[i]);
  return text + "]";
}

// --fusion as given: [{"calls": 1000, "bytes": 4096}, ...].
std::string jsonFusionCases(const Options& options) {
  std::string text = "[";
  for (size_t i = 0; i < options.fusion.size(); ++i)
    text += std::string(i ? ", " : "") + "{\"calls\": " + std::to_string(options.fusion[i].calls) +
            ", \"bytes\": " + std::to_string(options.fusion[i].bytes) + "}";
  return text + "]";
}

std::string ratioOrNull(double ratio) { return ratio > 0 ? jsonNumber(ratio) : "null"; }

std::string jsonFusion(const std::vector<FusionRow>& rows, const RunInfo& info) {
  std::string text = "[";
  for (size_t i = 0; i < rows.size(); ++i) {
    const FusionRow& row = rows[i];
    std::string peers;
    for (size_t p = 0; p < row.peers.size() && p < info.peers.size(); ++p)
      peers += std::string(p ? ",\n       " : "") + jsonString(info.peers[p].library) +
               ": {\"out_of_place\": " + jsonMeasure(row.peers[p]) +
               ", \"skipped\": " + orNull(row.peers[p].skipped) +
               ", \"ratio\": " + ratioOrNull(row.peerOverFused(p)) + "}";
    text +=
        std::string(i ? "," : "") + "\n    {\"collective\": \"" + row.desc->name +
        "\", \"calls\": " + std::to_string(row.fusionCase.calls) + ", \"bytes\": " + std::to_string(row.bytes) +
        ", \"count\": " + std::to_string(row.count) + ", \"total_bytes\": " + std::to_string(row.totalBytes()) +
        ", \"type\": \"" + typeName(row.type) + "\", \"redop\": \"" + (row.op ? opName(*row.op) : "none") +
        "\",\n     \"fused\": " + jsonFusionForm(row.fused, row.fusedStats) +
        ",\n     \"unfused\": " + jsonFusionForm(row.unfused, row.unfusedStats) +
        ",\n     \"single\": " + jsonFusionForm(row.single, row.singleStats) +
        ",\n     \"ratios\": {\"unfused_over_fused\": " + ratioOrNull(row.unfusedOverFused()) +
        ", \"fused_over_single\": " + ratioOrNull(row.fusedOverSingle()) + "},\n     \"peers\": {" + peers + "}}";
  }
  return text + (rows.empty() ? "]" : "\n  ]");
}

// --plan as given: [{"calls": 100, "bytes": 1024}, ...].
std::string jsonPlanCases(const Options& options) {
  std::string text = "[";
  for (size_t i = 0; i < options.plan.size(); ++i)
    text += std::string(i ? ", " : "") + "{\"calls\": " + std::to_string(options.plan[i].calls) +
            ", \"bytes\": " + std::to_string(options.plan[i].bytes) + "}";
  return text + "]";
}

std::string jsonPlanInfo(const PlanInfo& i) {
  if (!i.measured) return "null";
  return "{\"num_ops\": " + std::to_string(i.numOps) + ", \"num_subgraphs\": " + std::to_string(i.numSubgraphs) +
         ", \"ops_reused\": " + std::to_string(i.opsReused) +
         ", \"streams_without_reuse\": " + std::to_string(i.streamsWithoutReuse) +
         ", \"streams_used\": " + std::to_string(i.streamsUsed) +
         ", \"resource_bytes\": " + std::to_string(i.resourceBytes) + "}";
}

std::string countOrNull(long long n) { return n < 0 ? "null" : std::to_string(n); }

std::string jsonCompileForm(const PlanCompileForm& f) {
  if (!f.ran) return "{\"error\": " + jsonString(f.error.empty() ? "not run" : f.error) + "}";
  std::string reps;
  for (double ms : f.repMs) reps += std::string(reps.empty() ? "" : ", ") + jsonNumber(ms);
  return "{\"time_ms\": " + jsonNumber(f.timeMs) + ", \"time_ms_min\": " + jsonNumber(f.minMs) +
         ", \"time_ms_max\": " + jsonNumber(f.maxMs) + ", \"repetition_times_ms\": [" + reps +
         "], \"info\": " + jsonPlanInfo(f.info) + "}";
}

// null without --plan.
std::string jsonPlan(const std::vector<PlanRow>& rows, const PlanCompile& compile, const RunInfo& info) {
  if (rows.empty() && !compile.measured) return "null";
  std::string text = "{\"cases\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const PlanRow& row = rows[i];
    std::string peers;
    for (size_t p = 0; p < row.peers.size() && p < info.peers.size(); ++p)
      peers += std::string(p ? ",\n        " : "") + jsonString(info.peers[p].library) +
               ": {\"out_of_place\": " + jsonMeasure(row.peers[p]) +
               ", \"skipped\": " + orNull(row.peers[p].skipped) +
               ", \"ratio\": " + ratioOrNull(row.peerOverPlan(p)) + "}";
    text += std::string(i ? "," : "") + "\n     {\"calls\": " + std::to_string(row.planCase.calls) +
            ", \"bytes\": " + std::to_string(row.bytes) + ", \"count\": " + std::to_string(row.count) +
            ", \"total_bytes\": " + std::to_string(row.totalBytes()) + ", \"type\": \"" + typeName(row.type) +
            "\", \"redop\": \"" + opName(row.op) +
            "\",\n      \"plan\": " + jsonFusionForm(row.plan, row.planStats) +
            ",\n      \"eager\": " + jsonFusionForm(row.eager, row.eagerStats) +
            ",\n      \"plan_group\": " + jsonFusionForm(row.planGroup, row.planGroupStats) +
            ",\n      \"eager_group\": " + jsonFusionForm(row.eagerGroup, row.eagerGroupStats) +
            ",\n      \"info\": " + jsonPlanInfo(row.info) +
            ",\n      \"group_info\": " + jsonPlanInfo(row.groupInfo) +
            ",\n      \"mismatches\": " + countOrNull(row.mismatches) +
            ", \"group_mismatches\": " + countOrNull(row.groupMismatches) +
            ",\n      \"ratios\": {\"plan_over_eager\": " + ratioOrNull(row.planOverEager()) +
            ", \"eager_over_plan\": " + ratioOrNull(row.eagerOverPlan()) +
            ", \"plan_group_over_eager_group\": " + ratioOrNull(row.planGroupOverEagerGroup()) +
            "},\n      \"peers\": {" + peers + "}}";
  }
  text += rows.empty() ? "]" : "\n   ]";
  text += ",\n   \"compile\": ";
  if (!compile.measured) return text + "null}";
  text += "{\"ops\": " + std::to_string(compile.ops) + ", \"bytes\": " + std::to_string(compile.bytes) +
          ", \"count\": " + std::to_string(compile.count) + ", \"type\": \"" + typeName(compile.type) +
          "\", \"redop\": \"" + opName(compile.op) +
          "\", \"repetitions\": " + std::to_string(compile.repetitions) +
          ", \"subgraph_reuse_set\": " + orNull(compile.reuseSetting) +
          ",\n     \"plain\": " + jsonCompileForm(compile.plain) +
          ",\n     \"group\": " + jsonCompileForm(compile.group) + "}}";
  return text;
}

std::string jsonBounds(const std::optional<Bounds>& b) {
  if (!b) return "null";
  return "{\"bytes\": " + std::to_string(b->bytes) + ", \"threads\": " + std::to_string(b->threads) +
         ", \"memcpy_1thread_gbps\": " + jsonNumber(b->memcpy1) +
         ", \"memcpy_all_gbps\": " + jsonNumber(b->memcpyAll) + ", \"add_1thread_gbps\": " + jsonNumber(b->add1) +
         ", \"add_all_gbps\": " + jsonNumber(b->addAll) +
         ", \"pingpong_roundtrip_us\": " + (b->pingPongUs >= 0 ? jsonNumber(b->pingPongUs) : "null") + "}";
}

}  // namespace

bool writeJson(const std::string& path, const Options& options, const RunInfo& info, const Results& results) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "{\n  \"tool\": \"commperf\",\n  \"schema\": 3,\n");
  std::fprintf(f, "  \"command_line\": %s,\n", jsonString(options.commandLine).c_str());
  std::fprintf(f, "  \"ranks\": %d,\n  \"hosts\": [", info.nranks);
  for (size_t i = 0; i < info.rankLines.size(); ++i)
    std::fprintf(f, "%s%s", i ? ", " : "", jsonString(info.rankLines[i]).c_str());
  std::fprintf(f, "],\n");
  std::fprintf(f, "  \"versions\": {\"weft\": %s, \"weft_code\": %d, \"mpi\": %s},\n",
               jsonString(info.weftVersion).c_str(), info.version, jsonString(info.mpiVersion).c_str());
  std::fprintf(f, "  \"weft\": {\"plugins\": %s, \"algo\": %s},\n", jsonString(info.weftPlugins).c_str(),
               jsonString(info.weftAlgo).c_str());
  std::fprintf(f, "  \"peers\": %s,\n", jsonPeers(info, results).c_str());
  std::fprintf(f,
               "  \"options\": {\"minbytes\": %zu, \"maxbytes\": %zu, \"stepfactor\": %zu, \"stepbytes\": %zu, "
               "\"iters\": %d, \"rounds\": %d, \"iters_per_round\": %d, \"warmup_iters\": %d, \"check\": %d, "
               "\"root\": %d, \"peer_in_place\": %d, \"touch_input\": %d, \"gap_us\": %d, \"gloo_allreduce\": %s, "
               "\"fusion\": %s, \"fusion_coll\": %s, \"plan\": %s},\n",
               options.minBytes, options.maxBytes, options.stepFactor, options.stepBytes, options.iters,
               options.rounds, options.itersPerRound(), options.warmupIters, options.check ? 1 : 0, options.root,
               options.peerInPlace ? 1 : 0, options.touchInput ? 1 : 0, options.gapUs,
               jsonString(options.glooAllreduce).c_str(), jsonFusionCases(options).c_str(),
               jsonStrings(options.fusionColls).c_str(), jsonPlanCases(options).c_str());
  std::fprintf(f, "  \"bounds\": %s,\n", jsonBounds(info.bounds).c_str());
  std::fprintf(f, "  \"results\": [");
  for (size_t i = 0; i < results.rows.size(); ++i) {
    const Row& row = results.rows[i];
    std::fprintf(f,
                 "%s\n    {\"collective\": \"%s\", \"size\": %zu, \"count\": %zu, \"type\": \"%s\", "
                 "\"redop\": \"%s\", \"root\": %d,\n     \"out_of_place\": %s,\n     \"in_place\": %s,\n"
                 "     \"peers\": %s}",
                 i ? "," : "", row.desc->name, row.size, row.count, typeName(row.type),
                 row.op ? opName(*row.op) : "none", row.root, jsonMeasure(row.outOfPlace).c_str(),
                 jsonMeasure(row.inPlace).c_str(), jsonRowPeers(row, info).c_str());
  }
  std::fprintf(f, "\n  ],\n  \"summary\": [");
  for (size_t i = 0; i < results.colls.size(); ++i) {
    const CollSummary& c = results.colls[i];
    std::string peers;
    for (const PeerSummary& p : c.peers)
      peers += std::string(peers.empty() ? "" : ",\n       ") + jsonString(p.library) + ": " + jsonPeerSummary(p);
    std::fprintf(f,
                 "%s\n    {\"collective\": \"%s\", \"weft_algorithm\": %s,\n     \"weft\": {%s},\n"
                 "     \"peers\": {%s}}",
                 i ? "," : "", c.desc->name, jsonString(c.weftAlgorithm).c_str(), libraryMembers(c.weft).c_str(),
                 peers.c_str());
  }
  std::fprintf(f, "\n  ],\n  \"fusion\": %s,\n", jsonFusion(results.fusion, info).c_str());
  std::fprintf(f, "  \"plan\": %s,\n", jsonPlan(results.plan, results.planCompile, info).c_str());
  std::fprintf(f, "  \"plan_mismatches\": %lld,\n", results.planMismatches);
  std::fprintf(f, "  \"out_of_bounds\": %lld\n}\n", results.totalWrong);
  bool ok = !std::ferror(f);
  return std::fclose(f) == 0 && ok;
}

}  // namespace commperf
