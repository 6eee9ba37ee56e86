// Shared vocabulary of the fusion test: an operation of a group, the communicator's fusion settings and the
// model of the fusion rules that predicts the launches, and the runner that issues a group between
// weftGroupStart/End and checks the statistics and every output against the sequential reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../collectives/common.h"
#include "../collectives/harness.h"
#include "weft/weft.h"

namespace fusiontest {

using colltest::Report;

// How an operation is issued: the plain call (fusion id 1), the Ex call with attr NULL (fusion id 1), or
// the Ex call with an attribute carrying OpSpec::fusionId.
enum class Call { kPlain, kExNull, kExAttr };

struct OpSpec {
  // AllReduce, AllGather, ReduceScatter, or Send (to the next rank) / Recv (from the previous rank; the
  // Send it receives is op inputOf)
  weftCollType_t coll = weftCollAllReduce;
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;  // not used by AllGather
  size_t count = 0;          // AllReduce count, AllGather sendcount, ReduceScatter recvcount
  bool inPlace = false;
  Call call = Call::kPlain;
  int fusionId = 1;       // with Call::kExAttr; the others carry 1
  bool onStream = false;  // the context's created stream instead of NULL
  int comm = 0;           // 0: the context's world communicator, 1: its second one (Context::second)
  // AllReduce only: reads the recvbuff of this earlier AllReduce from element inputOffset on (in place:
  // works in it there), or writes (out of place) into the sendbuff of this earlier out-of-place AllReduce
  // from element outputOffset on.
  int inputOf = -1;
  size_t inputOffset = 0;
  int outputInto = -1;
  size_t outputOffset = 0;
  // Explicit places (element offsets) in one allocation for every op of the group, where set on the first;
  // inputs must not overlap each other.
  long long sendAt = -1, recvAt = -1;
};

// Input bytes per rank that count against a threshold and in bytesFused.
size_t inputBytes(const OpSpec& op, int nranks);
const char* collName(weftCollType_t coll);
std::string describe(const OpSpec& op);

// One collective kind's fusion setting, as given to weftCommSetFusion.
struct Setting {
  weftFusionMode_t mode = weftFusionAuto;
  size_t thresholdBytes = 0;  // weftFusionSize
  std::vector<int> splits;    // weftFusionIndex
};
struct Settings {
  Setting allReduce, allGather, reduceScatter;
  const Setting& of(weftCollType_t coll) const;
};
constexpr size_t kAutoThreshold = size_t{64} << 20;

// weftCommSetFusion with the setting (expectOk).
void apply(weftComm_t comm, weftCollType_t coll, const Setting& setting);
void applyAll(weftComm_t comm, const Settings& settings);

// What weftCommGetStats must show across a group: the launches, and the input bytes of the calls that ran
// inside fused operations (-1: not checked; the launches only where the rules leave them open).
struct Expect {
  long long launches = 0;
  long long bytesFused = -1;
};

// How the operations are issued: in one group (default), in consecutive groups starting at the given
// positions, or each on its own outside any group.
struct Issue {
  std::vector<size_t> groupStarts;
  bool ungrouped = false;
};

// The fusion rules of docs/fusion.md applied to the operations (no dependencies between them), with a
// communicator's settings and expectations at its index (OpSpec::comm).
std::vector<Expect> model(const std::vector<OpSpec>& ops, const std::vector<Settings>& perComm, int nranks,
                          const Issue& issue = {});

// Separate: every buffer its own allocation (with guard bytes). Contiguous: one allocation, the ops' send
// regions back to back, then their receive regions (where fused ops may be run without copies).
enum class Layout { kSeparate, kContiguous };

// Where the buffers come from (--memory): the heap; weftMemAlloc; or mixed: on even ranks weftMemAlloc for
// the even operations of a group with separate buffers (for every one of a contiguous group), the heap for
// the rest and on odd ranks.
enum class Memory { kHeap, kWeft, kMixed };

struct Context {
  colltest::CommView view;
  Memory memory = Memory::kHeap;
  colltest::CommView second;  // the same ranks, made by the case that needs it (weftCommSplit)
  weftStream_t stream = nullptr;
  std::string caseName;
  Report report;
};

// Allocates and fills the buffers, issues the operations in one group, waits, checks the statistics
// against expect and every output against the reference.
void runGroup(Context& ctx, const std::string& what, const std::vector<OpSpec>& ops, Layout layout,
              const Expect& expect);
// The same with an expectation per communicator, issued as the Issue says.
void runIssued(Context& ctx, const std::string& what, const std::vector<OpSpec>& ops, Layout layout,
               const std::vector<Expect>& perComm, const Issue& issue);

// The model's prediction, checked against the launches the case states (a disagreement is a bug of the
// test: fatal), then runGroup / runIssued.
void runModeled(Context& ctx, const std::string& what, const std::vector<OpSpec>& ops, Layout layout,
                const Settings& settings, long long statedLaunches);
void runModeled(Context& ctx, const std::string& what, const std::vector<OpSpec>& ops, Layout layout,
                const std::vector<Settings>& perComm, const std::vector<long long>& statedLaunches,
                const Issue& issue = {});

// The (type, op) combinations a case covers: every type with sum, the given types with avg and max too.
struct TypeOp {
  weftDataType_t type;
  weftRedOp_t op;
};
std::vector<TypeOp> typeOps(const std::vector<weftDataType_t>& avgMaxTypes);
std::string typeOpName(const TypeOp& t);

// Elements of the type in the given number of bytes.
size_t countFor(size_t bytes, weftDataType_t type);

// The cases; each runs on every rank and counts into ctx.report.
void caseIndex(Context& ctx);
void caseSize(Context& ctx);
void caseFusionIds(Context& ctx);
void caseAutoMany(Context& ctx);
void caseOff(Context& ctx);
void caseGatherScatter(Context& ctx);
void caseMixedKeys(Context& ctx);
void caseGroupsAndComms(Context& ctx);
void caseDependent(Context& ctx);
void caseBadInput(Context& ctx);
void caseEarly(Context& ctx);
// Environment-configured runs: which = "size1mb" or "index" (see CMakeLists.txt).
void caseEnv(Context& ctx, const std::string& which);
// A WEFT_FUSION that communicator creation must reject (weftInvalidArgument on every rank); the failures.
uint64_t caseBadEnv();

}  // namespace fusiontest
