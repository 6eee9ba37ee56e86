// The test's own statement of the fusion rules, settings and small helpers.
#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "fusion_test.h"

namespace fusiontest {

using colltest::typeInfo;

size_t inputBytes(const OpSpec& op, int nranks) {
  const size_t bytes = op.count * typeInfo(op.type).size;
  return op.coll == weftCollReduceScatter ? bytes * static_cast<size_t>(nranks) : bytes;
}

const char* collName(weftCollType_t coll) {
  switch (coll) {
    case weftCollAllReduce:
      return "AllReduce";
    case weftCollAllGather:
      return "AllGather";
    case weftCollReduceScatter:
      return "ReduceScatter";
    case weftCollSend:
      return "Send";
    case weftCollRecv:
      return "Recv";
    default:
      return "?";
  }
}

std::string describe(const OpSpec& op) {
  char buf[200];
  const char* call = op.call == Call::kPlain ? "plain" : op.call == Call::kExNull ? "Ex(NULL)" : "Ex";
  std::snprintf(buf, sizeof buf, "%s %s %s count=%zu %s %s id=%d%s", collName(op.coll), typeInfo(op.type).name,
                op.coll == weftCollAllReduce || op.coll == weftCollReduceScatter ? colltest::opName(op.op) : "-",
                op.count, op.inPlace ? "in-place" : "out-of-place", call,
                op.call == Call::kExAttr ? op.fusionId : 1, op.onStream ? " stream" : "");
  std::string s = buf;
  if (op.inputOf >= 0) {
    s += " input=output of op #" + std::to_string(op.inputOf) + " from element " + std::to_string(op.inputOffset);
  }
  if (op.outputInto >= 0) {
    s += " output=input of op #" + std::to_string(op.outputInto) + " from element " +
         std::to_string(op.outputOffset);
  }
  return s;
}

const Setting& Settings::of(weftCollType_t coll) const {
  if (coll == weftCollAllGather) return allGather;
  if (coll == weftCollReduceScatter) return reduceScatter;
  return allReduce;
}

void apply(weftComm_t comm, weftCollType_t coll, const Setting& setting) {
  weftFusionConfig_t config = WEFT_FUSION_CONFIG_INITIALIZER;
  config.mode = setting.mode;
  config.thresholdBytes = setting.thresholdBytes;
  config.splitIndices = setting.splits.empty() ? nullptr : setting.splits.data();
  config.numSplitIndices = static_cast<int>(setting.splits.size());
  colltest::expectOk(weftCommSetFusion(comm, coll, &config),
                     std::string("weftCommSetFusion(") + collName(coll) + ")");
}

void applyAll(weftComm_t comm, const Settings& settings) {
  apply(comm, weftCollAllReduce, settings.allReduce);
  apply(comm, weftCollAllGather, settings.allGather);
  apply(comm, weftCollReduceScatter, settings.reduceScatter);
}

std::vector<Expect> model(const std::vector<OpSpec>& ops, const std::vector<Settings>& perComm, int nranks,
                          const Issue& issue) {
  // Key: communicator, collective, type, op, stream, fusion id, and the index mode's segment.
  using Key = std::tuple<int, int, int, int, bool, int, int>;
  std::map<Key, size_t> open;             // key -> bucket still taking operations
  std::vector<std::vector<int>> buckets;  // the fused operations, as op positions
  std::vector<size_t> bucketBytes;
  std::vector<int> allReduceIndex(perComm.size(), 0);  // per communicator, counted from each group's start
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    const OpSpec& op = ops[i];
    const size_t bytes = inputBytes(op, nranks);
    auto alone = [&] {
      buckets.push_back({i});
      bucketBytes.push_back(bytes);
    };
    bool groupStart = false;
    for (size_t start : issue.groupStarts) groupStart = groupStart || start == static_cast<size_t>(i);
    if (groupStart) {
      open.clear();
      std::fill(allReduceIndex.begin(), allReduceIndex.end(), 0);
    }
    const Setting& s = perComm.at(op.comm).of(op.coll);
    const int position = op.coll == weftCollAllReduce ? allReduceIndex[op.comm]++ : 0;
    const int id = op.call == Call::kExAttr ? op.fusionId : 1;
    const bool p2p = op.coll == weftCollSend || op.coll == weftCollRecv;
    if (issue.ungrouped || p2p || id == 0 || s.mode == weftFusionOff) {
      alone();
      continue;
    }
    const bool bySize = s.mode == weftFusionAuto || s.mode == weftFusionSize;
    const size_t threshold = s.mode == weftFusionAuto ? kAutoThreshold : s.thresholdBytes;
    if (bySize && bytes > threshold) {  // alone, and the open bucket stays open
      alone();
      continue;
    }
    int segment = 0;
    if (s.mode == weftFusionIndex) {
      for (int split : s.splits) segment += position >= split ? 1 : 0;
    }
    const Key key{op.comm, op.coll, op.type, op.coll == weftCollAllGather ? 0 : op.op, op.onStream, id, segment};
    auto it = open.find(key);
    const bool fits = it != open.end() && (!bySize || bucketBytes[it->second] + bytes <= threshold);
    if (fits) {
      buckets[it->second].push_back(i);
      bucketBytes[it->second] += bytes;
    } else {
      open[key] = buckets.size();
      alone();
    }
  }
  std::vector<Expect> e(perComm.size());
  for (Expect& x : e) x.bytesFused = 0;
  for (size_t b = 0; b < buckets.size(); ++b) {
    Expect& x = e[ops[buckets[b].front()].comm];
    ++x.launches;
    if (buckets[b].size() >= 2) x.bytesFused += static_cast<long long>(bucketBytes[b]);
  }
  return e;
}

std::vector<TypeOp> typeOps(const std::vector<weftDataType_t>& avgMaxTypes) {
  std::vector<TypeOp> out;
  for (weftDataType_t t : colltest::kAllTypes) out.push_back({t, weftSum});
  for (weftDataType_t t : avgMaxTypes) {
    out.push_back({t, weftAvg});
    out.push_back({t, weftMax});
  }
  return out;
}

std::string typeOpName(const TypeOp& t) {
  return std::string(typeInfo(t.type).name) + "/" + colltest::opName(t.op);
}

size_t countFor(size_t bytes, weftDataType_t type) { return bytes / typeInfo(type).size; }

}  // namespace fusiontest
