// The stream section: operations queued on created streams without waiting, then synchronized and
// checked; two streams on two communicators (world and a duplicate) in use at the same time.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "coll_case.h"
#include "harness.h"
#include "sections.h"

namespace colltest {

namespace {

struct Queued {
  const CommView* view;
  weftStream_t stream;
  std::unique_ptr<CollCase> c;
};

void enqueue(std::vector<Queued>& queued, const CommView& view, weftStream_t stream, const CaseParams& params) {
  Queued q{&view, stream, std::make_unique<CollCase>(params, nextSalt())};
  q.c->prepare(view);
  const std::string what = q.c->describe(view) + " (queued on a stream)";
  setCurrentOp(what);
  expectOk(q.c->launch(view, stream), what);
  queued.push_back(std::move(q));
}

void synchronize(weftStream_t stream, const std::string& name, Report& report) {
  setCurrentOp("weftStreamSynchronize(" + name + ")");
  expectOk(weftStreamSynchronize(stream), "weftStreamSynchronize(" + name + ")");
  const weftResult_t idle = weftStreamQuery(stream);
  if (idle != weftSuccess) {
    reportFailure(report, "weftStreamQuery(" + name + ") after weftStreamSynchronize returned " +
                              weftGetErrorString(idle) + ", expected weftSuccess");
  }
}

void checkAsyncError(const CommView& view, Report& report) {
  weftResult_t async = weftInternalError;
  expectOk(weftCommGetAsyncError(view.comm, &async), "weftCommGetAsyncError(" + view.name + ")");
  if (async != weftSuccess) {
    reportFailure(report, "weftCommGetAsyncError(" + view.name + ") reports " + weftGetErrorString(async) + ": " +
                              weftGetLastErrorMessage());
  }
}

CaseParams params(Coll coll, weftDataType_t type, weftRedOp_t op, size_t count, bool inPlace, int root = 0) {
  CaseParams p;
  p.coll = coll;
  p.type = type;
  p.op = op;
  p.count = count;
  p.inPlace = inPlace;
  p.root = root;
  return p;
}

}  // namespace

Report runStreamSection() {
  Report report;
  resetSalt(3000000000);
  const int me = harness().worldRank;
  const int np = harness().worldSize;
  const std::vector<size_t>& counts = harness().options.counts;
  size_t count = 65536;
  if (!counts.empty())
    count = std::max<size_t>(1, std::min(count, *std::max_element(counts.begin(), counts.end())));

  CommView world = createWorldComm(nullptr);
  weftStream_t s1 = nullptr;
  expectOk(weftStreamCreate(&s1), "weftStreamCreate");

  // Eight AllReduces on different buffers, an AllGather and a Broadcast, queued without waiting.
  {
    static const weftDataType_t kTypes[8] = {weftFloat32, weftInt32, weftFloat16, weftBfloat16,
                                             weftFloat64, weftInt8,  weftUint64,  weftFloat32};
    std::vector<Queued> queued;
    for (int i = 0; i < 8; ++i) {
      enqueue(queued, world, s1, params(Coll::kAllReduce, kTypes[i], kAllOps[i % WEFT_NUM_RED_OPS], count, i % 2));
    }
    enqueue(queued, world, s1, params(Coll::kAllGather, weftInt32, weftSum, count / 8 + 1, false));
    enqueue(queued, world, s1, params(Coll::kBroadcast, weftUint8, weftSum, count, false, np - 1));
    const weftResult_t busy = weftStreamQuery(s1);
    ++report.calls;
    if (busy != weftSuccess && busy != weftInProgress) {
      reportFailure(report, std::string("weftStreamQuery with queued work returned ") + weftGetErrorString(busy) +
                                ": " + weftGetLastErrorMessage());
    }
    synchronize(s1, "stream 1", report);
    checkAsyncError(world, report);
    for (Queued& q : queued) q.c->verify(*q.view, report);
  }

  // Two streams on two communicators at the same time.
  {
    CommView dup;
    dup.name = "dup(split color 0)";
    setCurrentOp("weftCommSplit " + dup.name);
    expectOk(weftCommSplit(world.comm, 0, me, &dup.comm), "weftCommSplit(" + dup.name + ")");
    if (!dup.comm) fatal("weftCommSplit(" + dup.name + ") returned NULL");
    dup.rank = me;
    dup.size = np;
    dup.ids = world.ids;
    weftStream_t s2 = nullptr;
    expectOk(weftStreamCreate(&s2), "weftStreamCreate");
    std::vector<Queued> queued;
    for (int i = 0; i < 4; ++i) {
      enqueue(queued, world, s1, params(Coll::kAllReduce, weftFloat32, weftSum, count, i % 2));
      enqueue(queued, dup, s2, params(Coll::kAllReduce, weftInt64, weftMax, count, false));
      enqueue(queued, dup, s2, params(Coll::kAllGather, weftFloat16, weftSum, count / 4 + 1, i % 2));
      enqueue(queued, world, s1, params(Coll::kBroadcast, weftFloat64, weftSum, 1000, i % 2, i % np));
      enqueue(queued, world, s1, params(Coll::kReduceScatter, weftInt32, weftSum, 1000, i % 2));
      enqueue(queued, dup, s2, params(Coll::kBarrier, weftInt8, weftSum, 0, false));
    }
    synchronize(s1, "stream 1 (world)", report);
    synchronize(s2, "stream 2 (dup)", report);
    checkAsyncError(world, report);
    checkAsyncError(dup, report);
    for (Queued& q : queued) q.c->verify(*q.view, report);
    expectOk(weftStreamDestroy(s2), "weftStreamDestroy");
    destroyComm(dup);
  }

  expectOk(weftStreamDestroy(s1), "weftStreamDestroy");
  destroyComm(world);
  return report;
}

}  // namespace colltest
