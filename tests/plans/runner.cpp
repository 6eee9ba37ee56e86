// runProgram: record, check that nothing ran, compile, then launch several times on fresh inputs, each launch
// checked against the reference and against the same calls issued eagerly.
#include <map>

#include "plans_test.h"

namespace plantest {

namespace {

// collectivesLaunched and opsSubmitted per communicator.
using Counts = std::map<int, std::pair<unsigned long long, unsigned long long>>;
Counts launchedPerComm(const Context& ctx, const std::vector<int>& comms) {
  Counts out;
  for (int c : comms) {
    weftCommStats_t stats = WEFT_COMM_STATS_INITIALIZER;
    colltest::expectOk(weftCommGetStats(ctx.view(c).comm, &stats), "weftCommGetStats");
    out[c] = {stats.collectivesLaunched, stats.opsSubmitted};
  }
  return out;
}

void checkNothingRan(Context& ctx, const Program& prog, const std::vector<int>& comms, uint64_t hashBefore,
                     const Counts& before, const std::string& when) {
  ++ctx.report.calls;
  if (prog.hash(Program::kPlanSet) != hashBefore) {
    fail(ctx, prog.what() + " | " + when + ": the recorded calls' buffers changed (something ran)");
  }
  for (int c : comms) {
    const unsigned long long now = launched(ctx.view(c).comm);
    if (now != before.at(c).first) {
      fail(ctx, prog.what() + " | " + when + ": collectivesLaunched of " + ctx.view(c).name + " went from " +
                    std::to_string(before.at(c).first) + " to " + std::to_string(now));
    }
  }
}

}  // namespace

RunResult runProgram(Context& ctx, const std::string& what, const std::vector<Op>& ops,
                     const RunOptions& options) {
  colltest::setCurrentOp("case " + ctx.caseName + " | " + what + " | recording");
  Program prog(ctx, what, ops);
  const std::vector<int> comms = prog.comms();
  prog.fill();
  const uint64_t hashBefore = prog.hash(Program::kPlanSet);
  const auto before = launchedPerComm(ctx, comms);
  for (int c : comms) colltest::expectOk(weftPlanBegin(ctx.view(c).comm), "weftPlanBegin: " + what);
  prog.issue(Program::kPlanSet);
  checkNothingRan(ctx, prog, comms, hashBefore, before, "after the recorded calls returned");
  std::map<int, weftPlan_t> plans;
  {
    ScopedEnv env(options.env);
    for (int c : comms) {
      plans[c] = nullptr;
      colltest::expectOk(weftPlanEnd(ctx.view(c).comm, &plans[c]), "weftPlanEnd: " + what);
      if (plans[c] == nullptr) colltest::fatal("weftPlanEnd returned success and a NULL plan: " + what);
    }
  }
  checkNothingRan(ctx, prog, comms, hashBefore, before, "after weftPlanEnd");
  RunResult result;
  result.comms = comms;
  for (int c : comms) {
    weftPlanInfo_t info = WEFT_PLAN_INFO_INITIALIZER;
    colltest::expectOk(weftPlanGetInfo(plans[c], &info), "weftPlanGetInfo: " + what);
    result.infos.push_back(info);
  }
  result.eagerLaunches.assign(comms.size(), 0);

  for (int launch = 0; launch < options.launches; ++launch) {
    weftStream_t stream = launch % 2 ? ctx.stream : nullptr;
    const std::string when = "launch " + std::to_string(launch + 1) + (stream ? " on a stream" : " on NULL");
    std::string label = what;
    label.append(" ").append(when);
    std::string current = "case " + ctx.caseName;
    current.append(" | ").append(what).append(" | ").append(when);
    colltest::setCurrentOp(current);
    prog.fill();
    auto b = launchedPerComm(ctx, comms);
    for (int c : comms) colltest::expectOk(weftPlanLaunch(plans[c], stream), "weftPlanLaunch: " + label);
    if (stream) colltest::expectOk(weftStreamSynchronize(stream), "weftStreamSynchronize: " + label);
    const auto planLaunched = launchedPerComm(ctx, comms);
    prog.verify(Program::kPlanSet, when);

    current = "case " + ctx.caseName;
    current.append(" | ").append(what).append(" | eager after ").append(when);
    colltest::setCurrentOp(current);
    const auto e = launchedPerComm(ctx, comms);
    prog.issue(Program::kEagerSet);
    const auto eagerLaunched = launchedPerComm(ctx, comms);
    prog.verify(Program::kEagerSet, when);
    prog.compareSets(when);
    for (size_t k = 0; k < comms.size(); ++k) {
      const int c = comms[k];
      result.eagerLaunches[k] = eagerLaunched.at(c).first - e.at(c).first;
      const char* names[2] = {"collectivesLaunched", "opsSubmitted"};
      for (int s = 0; s < 2; ++s) {
        const unsigned long long planDelta =
            s ? planLaunched.at(c).second - b.at(c).second : planLaunched.at(c).first - b.at(c).first;
        const unsigned long long eagerDelta =
            s ? eagerLaunched.at(c).second - e.at(c).second : eagerLaunched.at(c).first - e.at(c).first;
        if (planDelta == eagerDelta) continue;
        std::string message = what;
        message.append(" | ")
            .append(when)
            .append(": ")
            .append(names[s])
            .append(" of ")
            .append(ctx.view(c).name)
            .append(" went up by ");
        message.append(std::to_string(planDelta)).append(" for the plan, by ").append(std::to_string(eagerDelta));
        fail(ctx, message + " for the same calls issued eagerly");
      }
    }
  }
  for (int c : comms) colltest::expectOk(weftPlanDestroy(plans[c]), "weftPlanDestroy: " + what);
  return result;
}

}  // namespace plantest
