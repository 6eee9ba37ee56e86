// The program: the ops' buffers (a recorded set and an eager set), deterministic inputs with fresh salts per
// launch, issuing the calls (groups as the ops say), the reference check and the bit-for-bit comparison.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../collectives/buffers.h"
#include "../collectives/inputs.h"
#include "../collectives/reference.h"
#include "plans_test.h"

namespace plantest {

Op makeOp(Kind kind, weftDataType_t type, size_t count, int group) {
  Op op;
  op.kind = kind;
  op.type = type;
  op.count = count;
  op.group = group;
  return op;
}

// The type of Program::Impl's field `sets`, in a namespace with a name: a class with linkage must not hold
// types of an unnamed one (GCC's -Wsubobject-linkage, which a unity build shows).
namespace program_parts {
struct Placed {
  colltest::GuardedBuffer sendBuf, recvBuf;  // sendBuf: out of place, not reading another op's output
  const void* send = nullptr;
  void* recv = nullptr;
  std::vector<unsigned char> inputCopy;  // out of place: the input, which must stay unchanged
};
}  // namespace program_parts

namespace {

using colltest::Elem;
using colltest::GuardedBuffer;
using colltest::typeInfo;
using program_parts::Placed;

constexpr int kPrintPerOp = 3;

int rootOf(const Op& op, int n) { return ((op.root % n) + n) % n; }

size_t sendElems(const Op& op, int n) {
  if (op.kind == Kind::kBarrier) return 0;
  const bool perRank = op.kind == Kind::kReduceScatter || op.kind == Kind::kAllToAll;
  return perRank ? op.count * static_cast<size_t>(n) : op.count;
}

size_t recvElems(const Op& op, int n) {
  if (op.kind == Kind::kBarrier) return 0;
  const bool perRank = op.kind == Kind::kAllGather || op.kind == Kind::kAllToAll;
  return perRank ? op.count * static_cast<size_t>(n) : op.count;
}

bool isReducing(Kind k) { return k == Kind::kAllReduce || k == Kind::kReduce || k == Kind::kReduceScatter; }

uint64_t hashBytes(uint64_t h, const unsigned char* p, size_t bytes) {
  h = colltest::mix64(h ^ bytes);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    h = colltest::mix64(h ^ w);
  }
  for (; i < bytes; ++i) h = colltest::mix64(h ^ p[i]);
  return h;
}

}  // namespace

const char* kindName(Kind kind) {
  static const char* const kNames[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                       "Reduce",    "AllToAll",  "Barrier",       "SendRecv"};
  return kNames[static_cast<int>(kind)];
}

std::string describe(const Op& op) {
  char buf[240];
  std::snprintf(buf, sizeof buf, "%s %s %s count=%zu root=%d %s%s%s comm=%s group=%d", kindName(op.kind),
                typeInfo(op.type).name, isReducing(op.kind) ? colltest::opName(op.op) : "-", op.count, op.root,
                op.inPlace ? "in-place" : "out-of-place",
                op.fusionId >= 0 ? (" Ex id=" + std::to_string(op.fusionId)).c_str() : "",
                op.inputOf >= 0 ? (" input=op#" + std::to_string(op.inputOf)).c_str() : "",
                op.comm ? "sub" : "world", op.group);
  return buf;
}

void fail(Context& ctx, const std::string& message) {
  colltest::reportFailure(ctx.report, "case " + ctx.caseName + " | " + message);
}

void expectResult(Context& ctx, weftResult_t got, weftResult_t want, const std::string& what) {
  ++ctx.report.calls;
  const char* message = weftGetLastErrorMessage();
  if (got != want) {
    fail(ctx, what + " returned " + std::to_string(got) + " (" + weftGetErrorString(got) + "), expected " +
                  std::to_string(want) + " (" + weftGetErrorString(want) +
                  "); message: " + (message ? message : "(null)"));
  } else if (want != weftSuccess && (message == nullptr || message[0] == '\0')) {
    fail(ctx, what + ": no error message");
  }
}

unsigned long long launched(weftComm_t comm) {
  weftCommStats_t stats = WEFT_COMM_STATS_INITIALIZER;
  colltest::expectOk(weftCommGetStats(comm, &stats), "weftCommGetStats");
  return stats.collectivesLaunched;
}

ScopedEnv::ScopedEnv(const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [name, value] : vars) {
    setenv(name.c_str(), value.c_str(), 1);
    names_.push_back(name);
  }
}

ScopedEnv::~ScopedEnv() {
  for (const std::string& name : names_) unsetenv(name.c_str());
}

struct Program::Impl {
  Context& ctx;
  std::vector<Op> ops;
  std::vector<Placed> sets[2];
  std::vector<uint64_t> salts;
  std::vector<std::vector<Elem>> refs;  // reference outputs of the ops a later op reads

  Impl(Context& c, const std::vector<Op>& o) : ctx(c), ops(o), salts(o.size()), refs(o.size()) {}
  void place(int set);
  void fail(const std::string& what, const std::string& message) { plantest::fail(ctx, what + " | " + message); }
  template <weftDataType_t T>
  void verifyOp(int set, size_t i, const std::string& what);
};

void Program::Impl::place(int set) {
  std::vector<Placed>& placed = sets[set];
  placed.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const colltest::CommView& v = ctx.view(op.comm);
    const size_t size = typeInfo(op.type).size;
    const size_t sb = sendElems(op, v.size) * size, rb = recvElems(op, v.size) * size;
    Placed& p = placed[i];
    if (op.kind == Kind::kBarrier) continue;
    if (op.inPlace) {
      p.recvBuf.allocate(std::max(sb, rb));
      unsigned char* base = p.recvBuf.data();
      const size_t mine = static_cast<size_t>(v.rank) * op.count * size;
      p.send = op.kind == Kind::kAllGather ? base + mine : base;
      p.recv = op.kind == Kind::kReduceScatter ? base + mine : base;
    } else {
      p.recvBuf.allocate(rb);
      p.recv = p.recvBuf.data();
      if (op.inputOf >= 0) {
        p.send = placed[op.inputOf].recv;
      } else {
        p.sendBuf.allocate(sb);
        p.send = p.sendBuf.data();
      }
    }
  }
}

Program::Program(Context& ctx, std::string what, const std::vector<Op>& ops)
    : impl_(new Impl(ctx, ops)), what_(std::move(what)) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const std::string where = what_ + " op #" + std::to_string(i) + " " + describe(op);
    if ((op.kind == Kind::kAllToAll || op.kind == Kind::kSendRecv || op.kind == Kind::kBarrier) && op.inPlace) {
      colltest::fatal("test bug: in place " + where);
    }
    if (op.comm == 1 && !ctx.sub.comm) colltest::fatal("test bug: no sub-communicator for " + where);
    if (op.inputOf < 0) continue;
    const bool okConsumer = !op.inPlace && (op.kind == Kind::kAllReduce || op.kind == Kind::kReduce ||
                                            op.kind == Kind::kBroadcast || op.kind == Kind::kAllGather);
    const Op* src = op.inputOf < static_cast<int>(i) ? &ops[op.inputOf] : nullptr;
    const bool okSource = src && (src->kind == Kind::kAllReduce || src->kind == Kind::kBroadcast) &&
                          src->type == op.type && src->count == op.count && src->comm == op.comm;
    if (!okConsumer || !okSource) colltest::fatal("test bug: bad inputOf in " + where);
  }
  impl_->place(kPlanSet);
  impl_->place(kEagerSet);
}

Program::~Program() { delete impl_; }

void Program::fill() {
  Impl& m = *impl_;
  for (uint64_t& salt : m.salts) salt = colltest::nextSalt();  // the same sequence on every rank
  for (std::vector<Placed>& placed : m.sets) {
    for (Placed& p : placed) {
      if (p.recvBuf.allocated()) std::memset(p.recvBuf.data(), GuardedBuffer::kPoison, p.recvBuf.bytes());
    }
    for (size_t i = 0; i < m.ops.size(); ++i) {
      const Op& op = m.ops[i];
      Placed& p = placed[i];
      if (op.kind == Kind::kBarrier || op.inputOf >= 0) continue;
      const colltest::CommView& v = m.ctx.view(op.comm);
      const colltest::InputKind kind = colltest::kindFor(op.op);
      const uint64_t seed = colltest::inputSeed(m.salts[i], v.ids[v.rank], op.type, kind);
      const size_t elems = op.inPlace && op.kind == Kind::kAllGather ? op.count : sendElems(op, v.size);
      colltest::fillInputs(const_cast<void*>(p.send), op.type, kind, seed, 0, elems);
      if (!op.inPlace) {
        const auto* in = static_cast<const unsigned char*>(p.send);
        p.inputCopy.assign(in, in + elems * typeInfo(op.type).size);
      }
    }
  }
}

void Program::issue(int set) {
  Impl& m = *impl_;
  int group = -1;
  auto groupCall = [&](weftResult_t r, const char* name) {
    colltest::expectOk(r, std::string(name) + ": " + what_);
  };
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const Op& op = m.ops[i];
    const Placed& p = m.sets[set][i];
    if (op.group != group) {
      if (group >= 0) groupCall(weftGroupEnd(), "weftGroupEnd");
      if (op.group >= 0) groupCall(weftGroupStart(), "weftGroupStart");
      group = op.group;
    }
    const colltest::CommView& v = m.ctx.view(op.comm);
    weftComm_t c = v.comm;
    const int root = rootOf(op, v.size);
    weftOpAttr_t attr = WEFT_OP_ATTR_INITIALIZER;
    attr.fusionId = op.fusionId;
    const bool ex = op.fusionId >= 0;
    weftResult_t r = weftInternalError;
    switch (op.kind) {
      case Kind::kAllReduce:
        r = ex ? weftAllReduceEx(p.send, p.recv, op.count, op.type, op.op, c, nullptr, &attr)
               : weftAllReduce(p.send, p.recv, op.count, op.type, op.op, c, nullptr);
        break;
      case Kind::kAllGather:
        r = ex ? weftAllGatherEx(p.send, p.recv, op.count, op.type, c, nullptr, &attr)
               : weftAllGather(p.send, p.recv, op.count, op.type, c, nullptr);
        break;
      case Kind::kReduceScatter:
        r = ex ? weftReduceScatterEx(p.send, p.recv, op.count, op.type, op.op, c, nullptr, &attr)
               : weftReduceScatter(p.send, p.recv, op.count, op.type, op.op, c, nullptr);
        break;
      case Kind::kBroadcast:
        r = weftBroadcast(p.send, p.recv, op.count, op.type, root, c, nullptr);
        break;
      case Kind::kReduce:
        r = weftReduce(p.send, p.recv, op.count, op.type, op.op, root, c, nullptr);
        break;
      case Kind::kAllToAll:
        r = weftAllToAll(p.send, p.recv, op.count, op.type, c, nullptr);
        break;
      case Kind::kBarrier:
        r = weftBarrier(c, nullptr);
        break;
      case Kind::kSendRecv:
        r = weftSend(p.send, op.count, op.type, (v.rank + 1) % v.size, c, nullptr);
        if (r == weftSuccess) r = weftRecv(p.recv, op.count, op.type, (v.rank + v.size - 1) % v.size, c, nullptr);
        break;
    }
    colltest::expectOk(r, "case " + m.ctx.caseName + " | " + what_ + " | " +
                              (set == kPlanSet ? "recording" : "eager") + " op #" + std::to_string(i) + " " +
                              describe(op));
  }
  if (group >= 0) groupCall(weftGroupEnd(), "weftGroupEnd");
}

template <weftDataType_t T>
void Program::Impl::verifyOp(int set, size_t i, const std::string& what) {
  const Op& op = ops[i];
  const Placed& p = sets[set][i];
  const colltest::CommView& v = ctx.view(op.comm);
  const int n = v.size, r = v.rank, root = rootOf(op, n);
  constexpr size_t size = typeInfo(T).size;
  const colltest::InputKind kind = colltest::kindFor(op.op);
  std::vector<uint64_t> seeds(n);
  for (int q = 0; q < n; ++q) seeds[q] = colltest::inputSeed(salts[i], v.ids[q], T, kind);
  const std::vector<Elem>* source = op.inputOf >= 0 ? &refs[op.inputOf] : nullptr;
  auto input = [&](int q, size_t j) {  // rank q's input element j
    if (!source) return colltest::inputValueT<T>(kind, seeds[q], j);
    unsigned char b[8];
    colltest::encodeT<T>(b, (*source)[j]);  // the earlier op's result, rounded to the type
    return colltest::decodeT<T>(b);
  };
  bool keep = false;
  for (const Op& later : ops) keep = keep || later.inputOf == static_cast<int>(i);
  if (keep) refs[i].assign(op.count, Elem{});
  if (op.kind == Kind::kBarrier || (op.kind == Kind::kReduce && r != root)) return;

  const auto* got = static_cast<const unsigned char*>(p.recv);
  const size_t total = recvElems(op, n), c = std::max<size_t>(op.count, 1);
  size_t wrong = 0;
  for (size_t j = 0; j < total; ++j) {
    Elem ref;
    double tolerance = 0.0;
    bool ok;
    const Elem g = colltest::decodeT<T>(got + j * size);
    if (isReducing(op.kind)) {
      const size_t first = op.kind == Kind::kReduceScatter ? static_cast<size_t>(r) * op.count : 0;
      colltest::Reducer<T> reducer(op.op);
      for (int q = 0; q < n; ++q) reducer.add(input(q, first + j));
      ref = reducer.result(n);
      ok = colltest::resultMatches<T>(op.op, n, g, ref, reducer.absSum(), &tolerance);
    } else {
      if (op.kind == Kind::kBroadcast) {
        ref = input(root, j);
      } else if (op.kind == Kind::kAllGather) {
        ref = input(static_cast<int>(j / c), j % c);
      } else if (op.kind == Kind::kAllToAll) {
        ref = input(static_cast<int>(j / c), static_cast<size_t>(r) * op.count + j % c);
      } else {  // SendRecv: the previous rank's input
        ref = input((r + n - 1) % n, j);
      }
      unsigned char want[8];
      colltest::encodeT<T>(want, ref);
      ok = std::memcmp(want, got + j * size, size) == 0;
    }
    if (keep) refs[i][j] = ref;
    if (ok) continue;
    if (wrong++ < kPrintPerOp) {
      char buf[320];
      std::snprintf(buf, sizeof buf, "op #%zu %s: element %zu: got %s, expected %s", i, describe(op).c_str(), j,
                    colltest::formatElem(T, g).c_str(), colltest::formatElem(T, ref).c_str());
      fail(what, std::string(buf) + (tolerance > 0.0 ? " (tolerance " + std::to_string(tolerance) + ")" : ""));
    } else {
      ++ctx.report.failures;
    }
  }
  ctx.report.elements += total;
  if (wrong > kPrintPerOp) {
    --ctx.report.failures;  // the summary is not another failure
    fail(what, "op #" + std::to_string(i) + ": " + std::to_string(wrong) + " of " + std::to_string(total) +
                   " elements wrong");
  }
}

void Program::verify(int set, const std::string& when) {
  Impl& m = *impl_;
  const std::string what = what_ + " | " + when + (set == kPlanSet ? " (plan)" : " (eager)");
  for (size_t i = 0; i < m.ops.size(); ++i) {
    ++m.ctx.report.calls;
    const Op& op = m.ops[i];
    colltest::withType(op.type, [&]<weftDataType_t T>() { m.verifyOp<T>(set, i, what); });
    const Placed& p = m.sets[set][i];
    if (!p.inputCopy.empty() && std::memcmp(p.send, p.inputCopy.data(), p.inputCopy.size()) != 0) {
      m.fail(what, "op #" + std::to_string(i) + " " + describe(op) + ": its send buffer was modified");
    }
    long long bad = 0;
    for (const GuardedBuffer* b : {&p.sendBuf, &p.recvBuf}) {
      if (!b->guardsIntact(&bad)) {
        m.fail(what, "op #" + std::to_string(i) + " " + describe(op) + ": guard byte overwritten at offset " +
                         std::to_string(bad));
      }
    }
  }
}

void Program::compareSets(const std::string& when) {
  Impl& m = *impl_;
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const Op& op = m.ops[i];
    const colltest::CommView& v = m.ctx.view(op.comm);
    if (op.kind == Kind::kBarrier || (op.kind == Kind::kReduce && v.rank != rootOf(op, v.size))) continue;
    const size_t size = typeInfo(op.type).size;
    const auto* a = static_cast<const unsigned char*>(m.sets[kPlanSet][i].recv);
    const auto* b = static_cast<const unsigned char*>(m.sets[kEagerSet][i].recv);
    const size_t total = recvElems(op, v.size);
    if (std::memcmp(a, b, total * size) == 0) continue;
    size_t j = 0;
    while (std::memcmp(a + j * size, b + j * size, size) == 0) ++j;
    m.fail(what_ + " | " + when,
           "op #" + std::to_string(i) + " " + describe(op) + ": plan and eager results differ at element " +
               std::to_string(j) + ": plan " +
               colltest::formatElem(op.type, colltest::decodeElem(a + j * size, op.type)) + ", eager " +
               colltest::formatElem(op.type, colltest::decodeElem(b + j * size, op.type)));
  }
}

uint64_t Program::hash(int set) const {
  uint64_t h = 0;
  for (const Placed& p : impl_->sets[set]) {
    for (const GuardedBuffer* b : {&p.sendBuf, &p.recvBuf}) {
      if (!b->allocated()) continue;
      const size_t guard = GuardedBuffer::kGuardBytes;
      h = hashBytes(h, b->data() - guard, b->bytes() + 2 * guard);
    }
  }
  return h;
}

std::vector<int> Program::comms() const {
  std::vector<int> out;
  for (const Op& op : impl_->ops) {
    if (std::find(out.begin(), out.end(), op.comm) == out.end()) out.push_back(op.comm);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace plantest
