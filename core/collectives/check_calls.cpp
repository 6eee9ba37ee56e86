#include "core/collectives/check_calls.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/comm/comm.h"
#include "core/comm/comm_channel.h"
#include "core/common/error.h"
#include "core/common/log.h"
#include "core/common/rank_list.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {

// What every rank must agree on. Fields that do not apply to the collective are -1, so that they cannot
// differ. Plain integers: the record goes over the wire as bytes.
struct Fingerprint {
  uint64_t call;  // the communicator's checked calls so far
  uint64_t count;
  int32_t kind;
  int32_t type;
  int32_t op;
  int32_t root;
  uint64_t members;  // calls fused into this one (0: a single call)

  auto fields() const { return std::tie(call, count, kind, type, op, root, members); }
  bool operator<(const Fingerprint& other) const { return fields() < other.fields(); }
};

bool reduces(OpKind kind) {
  return kind == OpKind::AllReduce || kind == OpKind::ReduceScatter || kind == OpKind::Reduce;
}
bool rooted(OpKind kind) { return kind == OpKind::Broadcast || kind == OpKind::Reduce; }

Fingerprint fingerprintOf(const Op& op, uint64_t call, size_t identicalCalls) {
  Fingerprint f{};
  f.call = call;
  f.kind = static_cast<int32_t>(op.kind);
  f.count = op.kind == OpKind::Barrier ? 0 : op.args.count;
  f.type = op.kind == OpKind::Barrier ? -1 : static_cast<int32_t>(op.args.type);
  f.op = reduces(op.kind) ? static_cast<int32_t>(op.args.op) : -1;
  f.root = rooted(op.kind) ? op.args.root : -1;
  f.members = op.members ? op.members->size() : identicalCalls;
  return f;
}

std::string describe(const Fingerprint& f) {
  std::string text = fmt::format("{} count {}", opName(static_cast<OpKind>(f.kind)), f.count);
  if (f.type >= 0) text += fmt::format(" {}", dataTypeName(static_cast<weftDataType_t>(f.type)));
  if (f.op >= 0) text += fmt::format(" op {}", redOpName(static_cast<weftRedOp_t>(f.op)));
  if (f.root >= 0) text += fmt::format(" root {}", f.root);
  if (f.members > 0) text += fmt::format(" ({} fused calls)", f.members);
  return text + fmt::format(" (call #{})", f.call);
}

}  // namespace

void checkSameCall(const Op& op, size_t identicalCalls) {
  weftComm& comm = *op.comm;
  if (comm.nranks == 1) return;
  const Fingerprint mine = fingerprintOf(op, comm.checkedCalls++, identicalCalls);
  const std::vector<Fingerprint> all = allGatherRecords(comm, mine, "WEFT_CHECK fingerprint");

  std::map<Fingerprint, std::vector<int>> ranksOf;
  for (int r = 0; r < comm.nranks; ++r) ranksOf[all[r]].push_back(r);
  if (ranksOf.size() == 1) return;
  std::string calls;
  for (const auto& [fingerprint, ranks] : ranksOf) {
    calls += fmt::format("{}{}: {}", calls.empty() ? "" : "; ", rankList(ranks), describe(fingerprint));
  }
  throw AgreedError(weftInvalidUsage, fmt::format("WEFT_CHECK: the ranks' calls differ: {}", calls));
}

}  // namespace weft
