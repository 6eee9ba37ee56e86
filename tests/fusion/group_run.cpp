// The runner: buffers (separate allocations, or carved back to back from one), deterministic inputs, the
// group, the statistics, and the comparison of every output with the sequential reference.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "../collectives/buffers.h"
#include "../collectives/inputs.h"
#include "../collectives/reference.h"
#include "fusion_test.h"

namespace fusiontest {

namespace {

using colltest::Elem;
using colltest::GuardedBuffer;
using colltest::typeInfo;

constexpr int kPrintPerOp = 3;

uint64_t hashBytes(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = bytes;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    h = colltest::mix64(h ^ w);
  }
  for (; i < bytes; ++i) h = colltest::mix64(h ^ p[i]);
  return h;
}

// Where one operation's data lives. input: its own send region (out-of-place, not reading another op's
// output); output: its own recv region (for in-place ReduceScatter the whole send-and-receive buffer).
struct Placement {
  size_t inputBytes = 0, outputBytes = 0;
  unsigned char* input = nullptr;
  unsigned char* output = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
  std::vector<unsigned char> inputCopy;  // the input before the call, which must stay unchanged
  uint64_t salt = 0;
};

class Group {
 public:
  Group(Context& ctx, const std::string& what, const std::vector<OpSpec>& ops)
      : ctx_(ctx), what_(what), ops_(ops), placed_(ops.size()) {}

  void place(Layout layout);
  void fill();
  void issue(const Issue& plan);
  void verifyAll();

 private:
  void placeExplicitly();  // at OpSpec::sendAt/recvAt in one allocation
  // Whether operation i's buffers come from weftMemAlloc (Context::memory).
  bool fromWeftMemory(size_t i) const {
    return ctx_.memory == Memory::kWeft ||
           (ctx_.memory == Memory::kMixed && ctx_.view.rank % 2 == 0 && i % 2 == 0);
  }
  void fail(const std::string& message) {
    colltest::reportFailure(ctx_.report, "case " + ctx_.caseName + " | " + what_ + " | " + message);
  }
  template <weftDataType_t T>
  void verify(int i);
  // Whether op j's output overlaps [begin, begin + bytes).
  bool overlapsOutput(size_t j, const unsigned char* begin, size_t bytes) const;

  Context& ctx_;
  std::string what_;
  const std::vector<OpSpec>& ops_;
  std::vector<Placement> placed_;
  std::vector<std::unique_ptr<GuardedBuffer>> buffers_;
  std::vector<std::vector<Elem>> refs_;  // reference outputs of the ops a later op reads
};

void Group::place(Layout layout) {
  const size_t n = static_cast<size_t>(ctx_.view.size);
  for (size_t i = 0; i < ops_.size(); ++i) {
    const OpSpec& op = ops_[i];
    Placement& p = placed_[i];
    const size_t block = op.count * typeInfo(op.type).size;
    const size_t sendBytes = op.coll == weftCollRecv ? 0 : op.coll == weftCollReduceScatter ? n * block : block;
    const size_t recvBytes = op.coll == weftCollSend ? 0 : op.coll == weftCollAllGather ? n * block : block;
    if (!op.inPlace && op.inputOf < 0) p.inputBytes = sendBytes;
    const bool ownOutput = !(op.inPlace && op.inputOf >= 0) && op.outputInto < 0;
    if (ownOutput) p.outputBytes = op.inPlace ? std::max(sendBytes, recvBytes) : recvBytes;
  }
  auto align = [](size_t offset, size_t to) { return (offset + to - 1) / to * to; };
  if (!ops_.empty() && ops_[0].sendAt >= 0) {
    placeExplicitly();
    return;
  }
  if (layout == Layout::kContiguous) {
    // All inputs back to back, then all outputs: one allocation, each region at its type's alignment.
    size_t total = 0;
    std::vector<size_t> in(ops_.size()), out(ops_.size());
    for (size_t i = 0; i < ops_.size(); ++i) {
      total = align(total, typeInfo(ops_[i].type).size);
      in[i] = total;
      total += placed_[i].inputBytes;
    }
    for (size_t i = 0; i < ops_.size(); ++i) {
      total = align(total, typeInfo(ops_[i].type).size);
      out[i] = total;
      total += placed_[i].outputBytes;
    }
    GuardedBuffer::useWeftMemory(fromWeftMemory(0));
    buffers_.push_back(std::make_unique<GuardedBuffer>());
    buffers_.back()->allocate(total);
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (placed_[i].inputBytes) placed_[i].input = buffers_.back()->data() + in[i];
      if (placed_[i].outputBytes) placed_[i].output = buffers_.back()->data() + out[i];
    }
  } else {
    auto separate = [&](size_t bytes) -> unsigned char* {
      if (bytes == 0) return nullptr;
      buffers_.push_back(std::make_unique<GuardedBuffer>());
      buffers_.back()->allocate(bytes);
      return buffers_.back()->data();
    };
    for (size_t i = 0; i < placed_.size(); ++i) {
      Placement& p = placed_[i];
      GuardedBuffer::useWeftMemory(fromWeftMemory(i));
      p.input = separate(p.inputBytes);
      p.output = separate(p.outputBytes);
    }
  }
  const size_t r = static_cast<size_t>(ctx_.view.rank);
  for (size_t i = 0; i < ops_.size(); ++i) {
    const OpSpec& op = ops_[i];
    Placement& p = placed_[i];
    const size_t block = op.count * typeInfo(op.type).size;
    if (op.inputOf >= 0) {
      auto* source =
          static_cast<unsigned char*>(placed_[op.inputOf].recv) + op.inputOffset * typeInfo(op.type).size;
      p.send = source;
      p.recv = op.inPlace ? source : p.output;
    } else if (!op.inPlace) {
      p.send = p.input;
      p.recv = p.output;
    } else if (op.coll == weftCollAllGather) {
      p.recv = p.output;
      p.send = p.output + r * block;
    } else if (op.coll == weftCollReduceScatter) {
      p.send = p.output;
      p.recv = p.output + r * block;
    } else {
      p.send = p.recv = p.output;
    }
    if (op.outputInto >= 0) p.recv = placed_[op.outputInto].input + op.outputOffset * typeInfo(op.type).size;
  }
}

void Group::placeExplicitly() {
  const size_t n = static_cast<size_t>(ctx_.view.size);
  size_t extent = 0;
  for (const OpSpec& op : ops_) {
    const size_t size = typeInfo(op.type).size;
    const size_t block = op.count * size;
    extent = std::max(
        extent, static_cast<size_t>(op.sendAt) * size + (op.coll == weftCollReduceScatter ? n * block : block));
    extent = std::max(extent,
                      static_cast<size_t>(op.recvAt) * size + (op.coll == weftCollAllGather ? n * block : block));
  }
  GuardedBuffer::useWeftMemory(fromWeftMemory(0));
  buffers_.push_back(std::make_unique<GuardedBuffer>());
  buffers_.back()->allocate(extent);
  for (size_t i = 0; i < ops_.size(); ++i) {
    const size_t size = typeInfo(ops_[i].type).size;
    Placement& p = placed_[i];
    p.input = buffers_.back()->data() + static_cast<size_t>(ops_[i].sendAt) * size;
    p.inputBytes = ops_[i].count * size * (ops_[i].coll == weftCollReduceScatter ? n : 1);
    p.send = p.input;
    p.recv = buffers_.back()->data() + static_cast<size_t>(ops_[i].recvAt) * size;
  }
}

void Group::fill() {
  const int n = ctx_.view.size;
  refs_.resize(ops_.size());
  for (size_t i = 0; i < ops_.size(); ++i) {
    const OpSpec& op = ops_[i];
    Placement& p = placed_[i];
    p.salt = colltest::nextSalt();  // the same sequence on every rank
    if (op.inputOf >= 0 || op.coll == weftCollRecv) continue;
    const size_t elements = op.coll == weftCollReduceScatter ? op.count * n : op.count;
    const uint64_t seed =
        colltest::inputSeed(p.salt, ctx_.view.ids[ctx_.view.rank], op.type, colltest::kindFor(op.op));
    colltest::fillInputs(const_cast<void*>(p.send), op.type, colltest::kindFor(op.op), seed, 0, elements);
    if (p.inputBytes) p.inputCopy.assign(p.input, p.input + p.inputBytes);
  }
}

void Group::issue(const Issue& plan) {
  if (!plan.ungrouped) colltest::expectOk(weftGroupStart(), "weftGroupStart: " + what_);
  for (size_t i = 0; i < ops_.size(); ++i) {
    const OpSpec& op = ops_[i];
    const Placement& p = placed_[i];
    weftComm_t comm = op.comm ? ctx_.second.comm : ctx_.view.comm;
    if (!plan.ungrouped && i > 0 &&
        std::find(plan.groupStarts.begin(), plan.groupStarts.end(), i) != plan.groupStarts.end()) {
      colltest::expectOk(weftGroupEnd(), "weftGroupEnd: " + what_);
      colltest::expectOk(weftGroupStart(), "weftGroupStart: " + what_);
    }
    weftStream_t stream = op.onStream ? ctx_.stream : nullptr;
    weftOpAttr_t attr = WEFT_OP_ATTR_INITIALIZER;
    attr.fusionId = op.fusionId;
    const weftOpAttr_t* a = op.call == Call::kExAttr ? &attr : nullptr;
    const bool plain = op.call == Call::kPlain;
    weftResult_t result = weftInternalError;
    if (op.coll == weftCollAllReduce) {
      result = plain ? weftAllReduce(p.send, p.recv, op.count, op.type, op.op, comm, stream)
                     : weftAllReduceEx(p.send, p.recv, op.count, op.type, op.op, comm, stream, a);
    } else if (op.coll == weftCollSend) {
      result = weftSend(p.send, op.count, op.type, (ctx_.view.rank + 1) % ctx_.view.size, comm, stream);
    } else if (op.coll == weftCollRecv) {
      const int prev = (ctx_.view.rank + ctx_.view.size - 1) % ctx_.view.size;
      result = weftRecv(p.recv, op.count, op.type, prev, comm, stream);
    } else if (op.coll == weftCollAllGather) {
      result = plain ? weftAllGather(p.send, p.recv, op.count, op.type, comm, stream)
                     : weftAllGatherEx(p.send, p.recv, op.count, op.type, comm, stream, a);
    } else {
      result = plain ? weftReduceScatter(p.send, p.recv, op.count, op.type, op.op, comm, stream)
                     : weftReduceScatterEx(p.send, p.recv, op.count, op.type, op.op, comm, stream, a);
    }
    colltest::expectOk(
        result, "case " + ctx_.caseName + " | " + what_ + " | op #" + std::to_string(i) + " " + describe(op));
  }
  if (!plan.ungrouped) colltest::expectOk(weftGroupEnd(), "weftGroupEnd: case " + ctx_.caseName + " | " + what_);
  for (const OpSpec& op : ops_) {
    if (!op.onStream) continue;
    colltest::expectOk(weftStreamSynchronize(ctx_.stream), "weftStreamSynchronize: " + what_);
    break;
  }
}

bool Group::overlapsOutput(size_t j, const unsigned char* begin, size_t bytes) const {
  const OpSpec& op = ops_[j];
  const size_t block = op.count * typeInfo(op.type).size;
  const size_t out = op.coll == weftCollSend        ? 0
                     : op.coll == weftCollAllGather ? block * static_cast<size_t>(ctx_.view.size)
                                                    : block;
  const auto* recv = static_cast<const unsigned char*>(placed_[j].recv);
  return bytes > 0 && out > 0 && recv < begin + bytes && begin < recv + out;
}

template <weftDataType_t T>
void Group::verify(int i) {
  const OpSpec& op = ops_[i];
  const Placement& p = placed_[i];
  const int n = ctx_.view.size;
  const int r = ctx_.view.rank;
  constexpr size_t size = typeInfo(T).size;
  const colltest::InputKind kind = colltest::kindFor(op.op);
  std::vector<uint64_t> seeds(n);
  for (int q = 0; q < n; ++q) seeds[q] = colltest::inputSeed(p.salt, ctx_.view.ids[q], T, kind);
  const std::vector<Elem>* source = op.inputOf >= 0 ? &refs_[op.inputOf] : nullptr;
  // Rank q's input element j: its deterministic value, or the earlier op's reference rounded to the type.
  auto input = [&](int q, size_t j) {
    if (!source) return colltest::inputValueT<T>(kind, seeds[q], j);
    unsigned char b[8];
    colltest::encodeT<T>(b, (*source)[op.inputOffset + j]);
    return colltest::decodeT<T>(b);
  };
  bool keep = false;         // a later op reads this one's output
  bool overwritten = false;  // and works in it in place: only the last result is there to compare
  for (const OpSpec& later : ops_) {
    keep = keep || later.inputOf == i;
    overwritten = overwritten || (later.inputOf == i && later.inPlace);
  }
  if (keep) refs_[i].resize(op.count);

  if (op.coll == weftCollSend) return;
  if (op.coll == weftCollRecv) {  // the previous rank's input of the Send op.inputOf
    const int prev = (r + n - 1) % n;
    seeds.assign(n, colltest::inputSeed(placed_[op.inputOf].salt, ctx_.view.ids[prev], T, kind));
    source = nullptr;
  }
  const auto* got = static_cast<const unsigned char*>(p.recv);
  const bool reducing = op.coll == weftCollAllReduce || op.coll == weftCollReduceScatter;
  const size_t total = op.coll == weftCollAllGather ? op.count * n : op.count;
  const size_t first = op.coll == weftCollReduceScatter ? static_cast<size_t>(r) * op.count : 0;
  size_t wrong = 0;
  for (size_t j = 0; j < total; ++j) {
    Elem ref;
    double tolerance = 0.0;
    bool ok;
    const Elem g = colltest::decodeT<T>(got + j * size);
    if (reducing) {
      colltest::Reducer<T> reducer(op.op);
      for (int q = 0; q < n; ++q) reducer.add(input(q, first + j));
      ref = reducer.result(n);
      if (keep) refs_[i][j] = ref;
      if (overwritten) continue;
      ok = colltest::resultMatches<T>(op.op, n, g, ref, reducer.absSum(), &tolerance);
    } else {
      ref = input(static_cast<int>(j / std::max<size_t>(op.count, 1)), j % std::max<size_t>(op.count, 1));
      unsigned char want[8];
      colltest::encodeT<T>(want, ref);
      ok = std::memcmp(want, got + j * size, size) == 0;
    }
    if (ok) continue;
    if (wrong++ < kPrintPerOp) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "op #%d %s: element %zu: got %s, expected %s", i, describe(op).c_str(), j,
                    colltest::formatElem(T, g).c_str(), colltest::formatElem(T, ref).c_str());
      std::string message = buf;
      if (tolerance > 0.0) message += " (tolerance " + std::to_string(tolerance) + ")";
      fail(message);
    } else {
      ++ctx_.report.failures;
    }
  }
  ctx_.report.elements += overwritten ? 0 : total;
  if (wrong > kPrintPerOp) {
    --ctx_.report.failures;  // the summary line is not another failure
    fail("op #" + std::to_string(i) + ": " + std::to_string(wrong) + " of " + std::to_string(total) +
         " elements wrong");
  }
}

void Group::verifyAll() {
  uint64_t hash = 0;  // of the outputs every rank must have bit for bit (AllReduce, AllGather)
  for (size_t i = 0; i < ops_.size(); ++i) {
    ++ctx_.report.calls;
    const OpSpec& op = ops_[i];
    if (op.coll == weftCollAllReduce || op.coll == weftCollAllGather) {
      const size_t bytes = op.count * typeInfo(op.type).size * (op.coll == weftCollAllGather ? ctx_.view.size : 1);
      hash = colltest::mix64(hash ^ hashBytes(placed_[i].recv, bytes));
    }
    colltest::withType(ops_[i].type, [&]<weftDataType_t T>() { verify<T>(static_cast<int>(i)); });
    const Placement& p = placed_[i];
    bool written = false;  // another op's output
    for (size_t j = 0; j < ops_.size(); ++j)
      written = written || (j != i && overlapsOutput(j, p.input, p.inputBytes));
    if (!written && !p.inputCopy.empty() && std::memcmp(p.input, p.inputCopy.data(), p.inputBytes) != 0) {
      fail("op #" + std::to_string(i) + " " + describe(ops_[i]) + ": its send buffer was modified");
    }
  }
  if (!colltest::sameOnAllRanks(hash)) fail("the AllReduce and AllGather results differ between ranks (hash)");
  for (size_t b = 0; b < buffers_.size(); ++b) {
    long long bad = 0;
    if (!buffers_[b]->guardsIntact(&bad)) {
      fail("allocation " + std::to_string(b) + ": guard byte overwritten at offset " + std::to_string(bad));
    }
  }
}

weftCommStats_t stats(weftComm_t comm, const std::string& what) {
  weftCommStats_t s = WEFT_COMM_STATS_INITIALIZER;
  colltest::expectOk(weftCommGetStats(comm, &s), "weftCommGetStats: " + what);
  return s;
}

}  // namespace

void runIssued(Context& ctx, const std::string& what, const std::vector<OpSpec>& ops, Layout layout,
               const std::vector<Expect>& perComm, const Issue& issue) {
  std::string full = what + (layout == Layout::kContiguous ? " [contiguous]" : " [separate]");
  full += " (" + std::to_string(ops.size()) + " ops";
  if (issue.ungrouped) full += ", no group";
  if (issue.groupStarts.size() > 1) full += ", " + std::to_string(issue.groupStarts.size()) + " groups";
  full += ")";
  colltest::setCurrentOp("case " + ctx.caseName + " | " + full);
  Group group(ctx, full, ops);
  group.place(layout);
  group.fill();
  const weftComm_t comms[2] = {ctx.view.comm, ctx.second.comm};
  std::vector<weftCommStats_t> before;
  for (size_t c = 0; c < perComm.size(); ++c) before.push_back(stats(comms[c], full));
  group.issue(issue);
  for (size_t c = 0; c < perComm.size(); ++c) {
    const weftCommStats_t after = stats(comms[c], full);
    const std::string where = perComm.size() > 1 ? " of communicator " + std::to_string(c) : "";
    auto check = [&](const char* counter, unsigned long long b, unsigned long long a, long long want) {
      const long long delta = static_cast<long long>(a - b);
      if (want < 0 || delta == want) return;
      std::string message = "case " + ctx.caseName + " | " + full + " | " + counter;
      message += where + " went up by " + std::to_string(delta) + ", expected " + std::to_string(want);
      colltest::reportFailure(ctx.report, message);
    };
    long long submitted = 0;
    for (const OpSpec& op : ops) submitted += op.comm == static_cast<int>(c) ? 1 : 0;
    check("opsSubmitted", before[c].opsSubmitted, after.opsSubmitted, submitted);
    check("collectivesLaunched", before[c].collectivesLaunched, after.collectivesLaunched, perComm[c].launches);
    check("bytesFused", before[c].bytesFused, after.bytesFused, perComm[c].bytesFused);
  }
  group.verifyAll();
}

void runGroup(Context& ctx, const std::string& what, const std::vector<OpSpec>& ops, Layout layout,
              const Expect& expect) {
  runIssued(ctx, what, ops, layout, {expect}, Issue{});
}

void runModeled(Context& ctx, const std::string& what, const std::vector<OpSpec>& ops, Layout layout,
                const std::vector<Settings>& perComm, const std::vector<long long>& statedLaunches,
                const Issue& issue) {
  const std::vector<Expect> e = model(ops, perComm, ctx.view.size, issue);
  for (size_t c = 0; c < e.size(); ++c) {
    if (e[c].launches != statedLaunches.at(c)) {
      colltest::fatal("test bug: the model predicts " + std::to_string(e[c].launches) +
                      " launches on communicator " + std::to_string(c) + " for " + what + ", the case states " +
                      std::to_string(statedLaunches[c]));
    }
  }
  runIssued(ctx, what, ops, layout, e, issue);
}

void runModeled(Context& ctx, const std::string& what, const std::vector<OpSpec>& ops, Layout layout,
                const Settings& settings, long long statedLaunches) {
  runModeled(ctx, what, ops, layout, std::vector<Settings>{settings}, {statedLaunches});
}

}  // namespace fusiontest
