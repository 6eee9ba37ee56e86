// Shared vocabulary of the plans test: an operation of a program, the context (a world communicator and a
// sub-communicator made by weftCommSplit), the program runner that records a program into plans, launches
// them several times on fresh inputs and checks every output against the sequential reference and, bit for
// bit, against the same calls issued eagerly; and the cases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../collectives/common.h"
#include "../collectives/harness.h"
#include "weft/weft.h"

namespace plantest {

using colltest::Report;

// SendRecv: weftSend to the next rank and weftRecv from the previous one (outside a group only in a plan that is
// never issued eagerly: a launch runs its Send/Recv as one batch).
enum class Kind { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kBarrier, kSendRecv };
const char* kindName(Kind kind);

struct Op {
  Kind kind = Kind::kAllReduce;
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;  // reducing collectives only
  size_t count = 0;          // as in weft.h: per rank / per peer
  int root = 0;              // Broadcast and Reduce; negative: counted from the last rank (-1: the last)
  bool inPlace = false;      // not AllToAll, SendRecv, Barrier
  int fusionId = -1;         // >= 0: the Ex call with this fusion id (AllReduce, AllGather, ReduceScatter)
  int comm = 0;              // 0: the world communicator, 1: Context::sub
  int group = -1;            // consecutive ops with the same group >= 0 are issued in one weftGroupStart/End
  int inputOf = -1;          // out of place only: reads the output of this earlier AllReduce or Broadcast
                             // (same type and count, on the same communicator)
};
std::string describe(const Op& op);
// An op of `kind` with the defaults above otherwise.
Op makeOp(Kind kind, weftDataType_t type, size_t count, int group = -1);

struct Context {
  colltest::CommView world;
  colltest::CommView sub;  // weftCommSplit of world (see test_plans.cpp)
  weftStream_t stream = nullptr;
  std::string caseName;
  Report report;
  const colltest::CommView& view(int comm) const { return comm ? sub : world; }
};

// Counts a failure with the case name in front.
void fail(Context& ctx, const std::string& message);
// Checks a result code (and that a failure comes with a message); counts one call.
void expectResult(Context& ctx, weftResult_t got, weftResult_t want, const std::string& what);
unsigned long long launched(weftComm_t comm);

// How a program is run. The environment variables are set (identically on every rank) around weftPlanEnd
// and unset afterwards; empty: the process's own environment.
struct RunOptions {
  int launches = 3;
  std::vector<std::pair<std::string, std::string>> env;
};

// Records the ops in one plan per communicator they use, checks that nothing ran while recording or
// compiling, then per launch: fresh inputs, poisoned outputs, weftPlanLaunch (NULL stream and the created
// stream alternately), the reference check, the same calls issued eagerly on separate buffers, a bit-for-bit
// comparison and the same collectivesLaunched.
struct RunResult {
  std::vector<int> comms;                         // the communicators used, ascending
  std::vector<weftPlanInfo_t> infos;              // weftPlanGetInfo of their plans
  std::vector<unsigned long long> eagerLaunches;  // collectivesLaunched per eager issue (the last launch's)
};
RunResult runProgram(Context& ctx, const std::string& what, const std::vector<Op>& ops,
                     const RunOptions& options = {});

// The ops' buffers for one program (two sets: recorded and eager), for cases that drive the steps
// themselves.
class Program {
 public:
  static constexpr int kPlanSet = 0;
  static constexpr int kEagerSet = 1;
  Program(Context& ctx, std::string what, const std::vector<Op>& ops);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  void fill();                                    // fresh salts: both sets' inputs, outputs poisoned
  void issue(int set);                            // the calls, on set's buffers, NULL stream (expectOk)
  void verify(int set, const std::string& when);  // every output against the reference
  void compareSets(const std::string& when);      // plan set vs eager set, bit for bit
  uint64_t hash(int set) const;                   // of every buffer of the set (guards included)
  std::vector<int> comms() const;                 // the communicators the ops use
  const std::string& what() const { return what_; }

 private:
  struct Impl;
  Impl* impl_;
  std::string what_;
};

// Guards an environment variable setting: sets it on construction, unsets on destruction.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::vector<std::pair<std::string, std::string>>& vars);
  ~ScopedEnv();

 private:
  std::vector<std::string> names_;
};

// Ops made by a function of the index.
template <typename Make>
std::vector<Op> generate(int n, Make make) {
  std::vector<Op> ops;
  ops.reserve(n);
  for (int i = 0; i < n; ++i) ops.push_back(make(i));
  return ops;
}

// The cases; each runs on every rank and counts into ctx.report.
void caseRecording(Context& ctx);  // nothing runs while recording
void caseMixed(Context& ctx);      // every collective, groups, Ex ids, dependencies
void caseSplit(Context& ctx);      // a split communicator recorded separately; recording is per communicator
void caseFusion(Context& ctx);     // recorded groups fuse as the eager ones
void caseReuse(Context& ctx);      // classification and reuse with the default settings
void caseReuseEnv(Context& ctx);   // WEFT_STREAM_CAPACITY, WEFT_MAX_STREAMS, WEFT_SUBGRAPH_REUSE
void caseBadUsage(Context& ctx);
void caseLifecycle(Context& ctx);          // begin/end/launch/destroy cycles, empty plans
void caseLaunchAllocations(Context& ctx);  // launches (and eager calls) after the first allocate nothing
void caseStreams(Context& ctx);            // streams run at once, in dependency order; their resources
// The environment given by the CTest entry (no setenv): "reuse40", "off4" or "bad".
void caseEnvExternal(Context& ctx, const std::string& which);

}  // namespace plantest
