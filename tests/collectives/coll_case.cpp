#include "coll_case.h"

#include <cstdio>
#include <cstring>

#include "inputs.h"
#include "reference.h"

namespace colltest {

namespace {

constexpr int kPrintPerCall = 3;

uint64_t hashBytes(uint64_t h, const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    h = mix64(h ^ w);
  }
  for (; i < bytes; ++i) h = mix64(h ^ p[i]);
  return mix64(h ^ bytes);
}

}  // namespace

std::string CollCase::describe(const CommView& view) const {
  char buf[320];
  const bool rooted = p_.coll == Coll::kBroadcast || p_.coll == Coll::kReduce;
  char root[16] = "-";
  if (rooted) std::snprintf(root, sizeof root, "%d", p_.root);
  std::snprintf(buf, sizeof buf, "%s type=%s op=%s count=%zu %s root=%s comm=%s(rank %d of %d) algo=%s",
                collName(p_.coll), typeInfo(p_.type).name, isReducing(p_.coll) ? opName(p_.op) : "-", p_.count,
                p_.inPlace ? "in-place" : "out-of-place", root, view.name.c_str(), view.rank, view.size,
                harness().algo.c_str());
  return buf;
}

void CollCase::prepare(const CommView& view) {
  const size_t size = typeInfo(p_.type).size;
  const size_t n = static_cast<size_t>(view.size);
  const size_t r = static_cast<size_t>(view.rank);
  const size_t count = p_.count;
  const InputKind kind = kindFor(p_.op);
  const uint64_t mySeed = inputSeed(salt_, view.ids[r], p_.type, kind);
  auto snapshot = [&](const void* from, size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(from);
    sendCopy_.assign(b, b + bytes);
  };

  switch (p_.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce: {
      const bool isRoot = p_.coll == Coll::kAllReduce || view.rank == p_.root;
      if (p_.inPlace) {
        recv_.allocate(count * size);
        fillInputs(recv_.data(), p_.type, kind, mySeed, 0, count);
        sendPtr_ = recvPtr_ = recv_.data();
        if (!isRoot) snapshot(recv_.data(), count * size);  // Reduce writes recvbuff on the root only
      } else {
        send_.allocate(count * size);
        fillInputs(send_.data(), p_.type, kind, mySeed, 0, count);
        snapshot(send_.data(), count * size);
        sendPtr_ = send_.data();
        if (isRoot) {
          recv_.allocate(count * size);
          recvPtr_ = recv_.data();
        } else {
          recvPtr_ = nullptr;  // allowed for Reduce's non-roots
        }
      }
      break;
    }
    case Coll::kBroadcast: {
      const uint64_t rootSeed = inputSeed(salt_, view.ids[p_.root], p_.type, kind);
      recv_.allocate(count * size);
      recvPtr_ = recv_.data();
      if (p_.inPlace) {
        if (view.rank == p_.root) fillInputs(recv_.data(), p_.type, kind, rootSeed, 0, count);
        sendPtr_ = recvPtr_;
      } else if (view.rank == p_.root) {
        send_.allocate(count * size);
        fillInputs(send_.data(), p_.type, kind, rootSeed, 0, count);
        snapshot(send_.data(), count * size);
        sendPtr_ = send_.data();
      } else {
        sendPtr_ = nullptr;  // allowed for Broadcast's non-roots
      }
      break;
    }
    case Coll::kAllGather: {
      recv_.allocate(n * count * size);
      recvPtr_ = recv_.data();
      if (p_.inPlace) {
        unsigned char* mine = recv_.data() + r * count * size;
        fillInputs(mine, p_.type, kind, mySeed, 0, count);
        sendPtr_ = mine;
      } else {
        send_.allocate(count * size);
        fillInputs(send_.data(), p_.type, kind, mySeed, 0, count);
        snapshot(send_.data(), count * size);
        sendPtr_ = send_.data();
      }
      break;
    }
    case Coll::kReduceScatter: {
      if (p_.inPlace) {
        recv_.allocate(n * count * size);
        fillInputs(recv_.data(), p_.type, kind, mySeed, 0, n * count);
        sendPtr_ = recv_.data();
        recvPtr_ = recv_.data() + r * count * size;
      } else {
        send_.allocate(n * count * size);
        fillInputs(send_.data(), p_.type, kind, mySeed, 0, n * count);
        snapshot(send_.data(), n * count * size);
        sendPtr_ = send_.data();
        recv_.allocate(count * size);
        recvPtr_ = recv_.data();
      }
      break;
    }
    case Coll::kAllToAll: {
      recv_.allocate(n * count * size);
      recvPtr_ = recv_.data();
      if (p_.inPlace) {
        fillInputs(recv_.data(), p_.type, kind, mySeed, 0, n * count);
        sendPtr_ = recv_.data();
        break;
      }
      send_.allocate(n * count * size);
      fillInputs(send_.data(), p_.type, kind, mySeed, 0, n * count);
      snapshot(send_.data(), n * count * size);
      sendPtr_ = send_.data();
      break;
    }
    case Coll::kBarrier:
      break;
  }
}

weftResult_t CollCase::launch(const CommView& view, weftStream_t stream) {
  switch (p_.coll) {
    case Coll::kAllReduce:
      return weftAllReduce(sendPtr_, recvPtr_, p_.count, p_.type, p_.op, view.comm, stream);
    case Coll::kBroadcast:
      return weftBroadcast(sendPtr_, recvPtr_, p_.count, p_.type, p_.root, view.comm, stream);
    case Coll::kReduce:
      return weftReduce(sendPtr_, recvPtr_, p_.count, p_.type, p_.op, p_.root, view.comm, stream);
    case Coll::kAllGather:
      return weftAllGather(sendPtr_, recvPtr_, p_.count, p_.type, view.comm, stream);
    case Coll::kReduceScatter:
      return weftReduceScatter(sendPtr_, recvPtr_, p_.count, p_.type, p_.op, view.comm, stream);
    case Coll::kAllToAll:
      return weftAllToAll(sendPtr_, recvPtr_, p_.count, p_.type, view.comm, stream);
    case Coll::kBarrier:
      return weftBarrier(view.comm, stream);
  }
  return weftInternalError;
}

void CollCase::checkGuards(const GuardedBuffer& buffer, const char* which, Report& report, uint64_t* failures,
                           const std::string& what) {
  long long bad = 0;
  if (buffer.guardsIntact(&bad)) return;
  ++*failures;
  char buf[160];
  std::snprintf(buf, sizeof buf, "guard byte of the %s allocation (%zu bytes) overwritten at offset %lld: ", which,
                buffer.bytes(), bad);
  reportFailure(report, buf + what);
}

void CollCase::checkUnchanged(const void* now, Report& report, uint64_t* failures, const std::string& what) {
  if (sendCopy_.empty() || std::memcmp(now, sendCopy_.data(), sendCopy_.size()) == 0) return;
  const size_t size = typeInfo(p_.type).size;
  const auto* b = static_cast<const unsigned char*>(now);
  size_t first = 0;
  size_t changed = 0;
  for (size_t i = 0; i < sendCopy_.size() / size; ++i) {
    if (std::memcmp(b + i * size, sendCopy_.data() + i * size, size) != 0) {
      if (changed++ == 0) first = i;
    }
  }
  ++*failures;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "input buffer modified (%zu of %zu elements, first at index %zu: now %s, was %s): ", changed,
                sendCopy_.size() / size, first, formatElem(p_.type, decodeElem(b + first * size, p_.type)).c_str(),
                formatElem(p_.type, decodeElem(sendCopy_.data() + first * size, p_.type)).c_str());
  reportFailure(report, buf + what);
}

template <weftDataType_t T, typename Expected>
void CollCase::checkRange(const CommView& view, const unsigned char* got, size_t begin, size_t end, bool reducing,
                          Expected expected, Report& report, uint64_t* failures, const std::string& what) {
  constexpr size_t size = typeInfo(T).size;
  size_t wrong = 0;
  unsigned char want[8];
  for (size_t i = begin; i < end; ++i) {
    double absSum = 0.0;
    const Elem ref = expected(i, &absSum);
    const unsigned char* g = got + i * size;
    double tolerance = 0.0;
    bool ok;
    if (reducing) {
      ok = resultMatches<T>(p_.op, view.size, decodeT<T>(g), ref, absSum, &tolerance);
    } else {
      encodeT<T>(want, ref);
      ok = std::memcmp(want, g, size) == 0;
    }
    if (ok) continue;
    if (wrong++ < kPrintPerCall && printBudgetLeft()) {
      char buf[320];
      std::snprintf(buf, sizeof buf, "mismatch at index %zu: got %s, expected %s", i,
                    formatElem(T, decodeT<T>(g)).c_str(), formatElem(T, ref).c_str());
      std::string message = buf;
      if (tolerance > 0.0) {
        std::snprintf(buf, sizeof buf, " (tolerance %.3g)", tolerance);
        message += buf;
      }
      reportFailure(report, message + ": " + what);
    } else {
      ++report.failures;
    }
  }
  report.elements += end - begin;
  if (wrong > 0) {
    *failures += wrong;
    if (wrong > kPrintPerCall && printBudgetLeft()) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%zu of %zu elements wrong: ", wrong, end - begin);
      --report.failures;  // the summary line is not another failure
      reportFailure(report, buf + what);
    }
  }
}

template <weftDataType_t T>
void CollCase::verifyResults(const CommView& view, Report& report, uint64_t* failures, const std::string& what) {
  const size_t count = p_.count;
  const int n = view.size;
  const int r = view.rank;
  const auto* got = static_cast<const unsigned char*>(recvPtr_);
  const InputKind kind = kindFor(p_.op);
  const weftRedOp_t op = p_.op;
  std::vector<uint64_t> seeds(n);
  for (int q = 0; q < n; ++q) seeds[q] = inputSeed(salt_, view.ids[q], T, kind);
  // The reference for element firstIndex + i of every rank's input, reduced in rank order.
  auto reduced = [&](size_t firstIndex) {
    return [&, firstIndex](size_t i, double* absSum) {
      Reducer<T> reducer(op);
      for (int q = 0; q < n; ++q) reducer.add(inputValueT<T>(kind, seeds[q], firstIndex + i));
      *absSum = reducer.absSum();
      return reducer.result(n);
    };
  };

  switch (p_.coll) {
    case Coll::kAllReduce: {
      const uint64_t hash = hashBytes(0, got, count * typeInfo(T).size);
      report.allReduceHash = mix64(report.allReduceHash ^ hash);
      if (count > kFullSweepMaxCount && n > 1 && n == harness().worldSize) {
        // Large counts: every rank compares its 1/n slice with the reference, and the results must be
        // bit-identical on all ranks (weft's contract), checked here by hash.
        checkRange<T>(view, got, count * r / n, count * (r + 1) / n, true, reduced(0), report, failures, what);
        if (!sameOnAllRanks(hash)) {
          ++*failures;
          reportFailure(report, "result differs between ranks (hash; each rank compared only its slice " +
                                    std::to_string(count * r / n) + ".." + std::to_string(count * (r + 1) / n) +
                                    " with the reference): " + what);
        }
      } else {
        checkRange<T>(view, got, 0, count, true, reduced(0), report, failures, what);
      }
      break;
    }
    case Coll::kReduce:
      if (r == p_.root) checkRange<T>(view, got, 0, count, true, reduced(0), report, failures, what);
      break;
    case Coll::kReduceScatter:
      checkRange<T>(view, got, 0, count, true, reduced(static_cast<size_t>(r) * count), report, failures, what);
      break;
    case Coll::kBroadcast:
      checkRange<T>(
          view, got, 0, count, false, [&](size_t i, double*) { return inputValueT<T>(kind, seeds[p_.root], i); },
          report, failures, what);
      break;
    case Coll::kAllGather:
      checkRange<T>(
          view, got, 0, static_cast<size_t>(n) * count, false,
          [&](size_t i, double*) { return inputValueT<T>(kind, seeds[i / count], i % count); }, report, failures,
          what);
      break;
    case Coll::kAllToAll:
      checkRange<T>(
          view, got, 0, static_cast<size_t>(n) * count, false,
          [&](size_t i, double*) {
            return inputValueT<T>(kind, seeds[i / count], static_cast<size_t>(r) * count + i % count);
          },
          report, failures, what);
      break;
    case Coll::kBarrier:
      break;
  }
}

uint64_t CollCase::verify(const CommView& view, Report& report) {
  const std::string what = describe(view);
  uint64_t failures = 0;
  ++report.calls;
  checkGuards(send_, "send", report, &failures, what);
  checkGuards(recv_, "recv", report, &failures, what);
  if (!sendCopy_.empty()) checkUnchanged(p_.inPlace ? recvPtr_ : sendPtr_, report, &failures, what);
  if (p_.coll != Coll::kBarrier) {
    withType(p_.type, [&]<weftDataType_t T>() { verifyResults<T>(view, report, &failures, what); });
  }
  return failures;
}

void runCase(const CommView& view, const CaseParams& params, Report& report) {
  CollCase c(params, nextSalt());
  const std::string what = c.describe(view);
  setCurrentOp(what);
  c.prepare(view);
  expectOk(c.launch(view, nullptr), what);
  c.verify(view, report);
}

}  // namespace colltest
