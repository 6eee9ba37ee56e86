// The split section: weftCommSplit by parity with reversed keys, collectives on the sub-communicator
// checked against the sub-group's ranks in key order, and WEFT_SPLIT_NOCOLOR.
#include <algorithm>
#include <string>
#include <vector>

#include "coll_case.h"
#include "harness.h"
#include "sections.h"

namespace colltest {

namespace {

void checkMembership(const CommView& view, Report& report) {
  int count = -1, rank = -1;
  expectOk(weftCommCount(view.comm, &count), "weftCommCount(" + view.name + ")");
  expectOk(weftCommUserRank(view.comm, &rank), "weftCommUserRank(" + view.name + ")");
  ++report.calls;
  if (count != view.size || rank != view.rank) {
    reportFailure(report, "communicator " + view.name + " reports rank " + std::to_string(rank) + " of " +
                              std::to_string(count) + ", expected rank " + std::to_string(view.rank) + " of " +
                              std::to_string(view.size));
  }
}

void runOn(const CommView& view, Coll coll, weftDataType_t type, size_t count, bool inPlace, Report& report) {
  CaseParams params;
  params.coll = coll;
  params.type = type;
  params.op = weftSum;
  params.count = count;
  params.inPlace = inPlace;
  runCase(view, params, report);
}

}  // namespace

Report runSplitSection() {
  Report report;
  resetSalt(2000000000);
  const int me = harness().worldRank;
  const int np = harness().worldSize;
  CommView world = createWorldComm(nullptr);

  // color = rank % 2, key = -rank: the sub-communicator lists its world ranks in decreasing order.
  {
    const int color = me % 2;
    CommView sub;
    sub.name = "split(color=" + std::to_string(color) + ",key=-rank)";
    setCurrentOp("weftCommSplit " + sub.name);
    expectOk(weftCommSplit(world.comm, color, -me, &sub.comm), "weftCommSplit(" + sub.name + ")");
    for (int r = np - 1; r >= 0; --r) {
      if (r % 2 == color) sub.ids.push_back(r);
    }
    sub.size = static_cast<int>(sub.ids.size());
    sub.rank = static_cast<int>(std::find(sub.ids.begin(), sub.ids.end(), me) - sub.ids.begin());
    if (!sub.comm) fatal("weftCommSplit with color " + std::to_string(color) + " returned a NULL communicator");
    checkMembership(sub, report);
    runOn(sub, Coll::kAllReduce, weftFloat32, 1000, false, report);
    runOn(sub, Coll::kAllReduce, weftInt32, 1000, false, report);
    runOn(sub, Coll::kAllReduce, weftInt32, 1000, true, report);
    runOn(sub, Coll::kAllGather, weftFloat32, 1000, false, report);
    runOn(sub, Coll::kAllGather, weftInt32, 1000, true, report);
    // The parent stays usable while the child exists.
    runOn(world, Coll::kAllReduce, weftInt64, 1000, false, report);
    destroyComm(sub);
  }

  // WEFT_SPLIT_NOCOLOR for the last rank: it gets NULL, the others a communicator of np - 1 ranks.
  {
    const bool excluded = me == np - 1;
    CommView sub;
    sub.name = "split(color=0 or NOCOLOR on the last rank,key=rank)";
    static int sentinel;
    sub.comm = reinterpret_cast<weftComm_t>(&sentinel);  // must be overwritten with NULL when excluded
    setCurrentOp("weftCommSplit " + sub.name);
    expectOk(weftCommSplit(world.comm, excluded ? WEFT_SPLIT_NOCOLOR : 0, me, &sub.comm),
             "weftCommSplit(" + sub.name + ")");
    ++report.calls;
    if (excluded) {
      if (sub.comm != nullptr) {
        reportFailure(report, "weftCommSplit with WEFT_SPLIT_NOCOLOR did not set *newcomm to NULL");
      }
      sub.comm = nullptr;
    } else if (!sub.comm || sub.comm == reinterpret_cast<weftComm_t>(&sentinel)) {
      fatal("weftCommSplit with color 0 did not return a communicator");
    } else {
      for (int r = 0; r < np - 1; ++r) sub.ids.push_back(r);
      sub.size = np - 1;
      sub.rank = me;
      checkMembership(sub, report);
      runOn(sub, Coll::kAllReduce, weftInt32, 1000, false, report);
      runOn(sub, Coll::kAllGather, weftFloat64, 7, false, report);
      destroyComm(sub);
    }
  }

  destroyComm(world);
  return report;
}

}  // namespace colltest
