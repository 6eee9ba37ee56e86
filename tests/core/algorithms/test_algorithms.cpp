// Every collective algorithm, run over an in-memory Channel with one thread per rank, against a
// sequential reference computed here in higher precision: every rank count 1..8, counts from 0 to beyond
// a multiple of p, every type and op, in place and out of place, every root (sampled beyond 4 ranks).
// Also checked: AllReduce results are bit-identical across ranks, nothing is written outside recvbuff's
// documented extent or into sendbuff, every message sent is received with the size it was sent with,
// every request is waited for, and each algorithm puts the bytes on the wire that its comment says.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/pipeline.h"
#include "core/algorithms/sub_channel.h"
#include "core/reduce/reduce.h"
#include "memory_channel.h"
#include "topology/host_layout.h"

namespace weft {
namespace {

using testing::Delivery;
using testing::MemoryChannel;
using testing::MemoryWorld;

// ---- Element encoding and the reference reduction ------------------------------------------------------

constexpr weftDataType_t kTypes[] = {weftInt8,   weftUint8,   weftInt32,    weftUint32,  weftInt64,
                                     weftUint64, weftFloat16, weftBfloat16, weftFloat32, weftFloat64};
constexpr weftRedOp_t kOps[] = {weftSum, weftProd, weftMax, weftMin};
constexpr size_t kCounts[] = {0, 1, 3, 7, 64, 1000, 4099};
constexpr size_t kLargestCount = 4099;

bool isFloat(weftDataType_t type) {
  return type == weftFloat16 || type == weftBfloat16 || type == weftFloat32 || type == weftFloat64;
}
bool isSigned(weftDataType_t type) { return type == weftInt8 || type == weftInt32 || type == weftInt64; }

// Machine epsilon of each float format.
double epsilonOf(weftDataType_t type) {
  switch (type) {
    case weftFloat16:
      return std::ldexp(1.0, -10);
    case weftBfloat16:
      return std::ldexp(1.0, -7);
    case weftFloat32:
      return std::ldexp(1.0, -23);
    default:
      return std::ldexp(1.0, -52);
  }
}

float halfToFloat(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double value;
  if (exponent == 0) {
    value = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    value = mantissa ? NAN : INFINITY;
  } else {
    value = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return static_cast<float>(sign ? -value : value);
}
// Only for values exactly representable in float16 (the test's inputs are).
uint16_t floatToHalf(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (a == 0) return sign;
  int exponent;
  std::frexp(a, &exponent);  // a = m * 2^exponent, m in [0.5, 1)
  if (exponent - 1 < -14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal
  const uint16_t biased = static_cast<uint16_t>(exponent - 1 + 15);
  const uint16_t mantissa = static_cast<uint16_t>(std::ldexp(a, 11 - exponent) - 1024);
  return sign | static_cast<uint16_t>(biased << 10) | mantissa;
}
float bfloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t floatToBfloat16(float f) {  // exact for the test's inputs
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

double loadFloat(const void* buffer, size_t i, weftDataType_t type) {
  const char* at = static_cast<const char*>(buffer) + i * dataTypeSize(type);
  uint16_t h;
  float f;
  double d;
  switch (type) {
    case weftFloat16:
      std::memcpy(&h, at, 2);
      return halfToFloat(h);
    case weftBfloat16:
      std::memcpy(&h, at, 2);
      return bfloat16ToFloat(h);
    case weftFloat32:
      std::memcpy(&f, at, 4);
      return f;
    default:
      std::memcpy(&d, at, 8);
      return d;
  }
}
void storeFloat(void* buffer, size_t i, weftDataType_t type, double value) {
  char* at = static_cast<char*>(buffer) + i * dataTypeSize(type);
  uint16_t h;
  const float f = static_cast<float>(value);
  switch (type) {
    case weftFloat16:
      h = floatToHalf(f);
      std::memcpy(at, &h, 2);
      break;
    case weftBfloat16:
      h = floatToBfloat16(f);
      std::memcpy(at, &h, 2);
      break;
    case weftFloat32:
      std::memcpy(at, &f, 4);
      break;
    default:
      std::memcpy(at, &value, 8);
      break;
  }
}

// Integers travel as uint64: sign- or zero-extended on load, truncated on store, so that wrapping sums and
// products in uint64 are exact modulo the type's width.
uint64_t loadInt(const void* buffer, size_t i, weftDataType_t type) {
  const size_t size = dataTypeSize(type);
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const char*>(buffer) + i * size, size);  // little-endian
  const int width = static_cast<int>(size * 8);
  if (width < 64 && isSigned(type) && (bits >> (width - 1)) != 0) bits |= ~uint64_t{0} << width;
  return bits;
}
void storeInt(void* buffer, size_t i, weftDataType_t type, uint64_t value) {
  const size_t size = dataTypeSize(type);
  std::memcpy(static_cast<char*>(buffer) + i * size, &value, size);
}
uint64_t truncated(uint64_t value, weftDataType_t type) {
  const size_t width = dataTypeSize(type) * 8;
  return width == 64 ? value : value & ((uint64_t{1} << width) - 1);
}

uint64_t splitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Inputs: random bits for integers; for floats, values that keep the reference meaningful: in [-1, 1)
// for sums, near 1 for products (no overflow), and for float16/bfloat16 multiples of 1/64 in [-2, 2]
// (products: 1 + k/64, |k| <= 8), which are exact in both formats.
std::vector<char> makeInput(size_t count, weftDataType_t type, weftRedOp_t op, uint64_t seed) {
  std::vector<char> data(count * dataTypeSize(type));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = splitMix(seed * 0x100000001b3ULL + i);
    if (!isFloat(type)) {
      storeInt(data.data(), i, type, r);
      continue;
    }
    double value;
    if (type == weftFloat16 || type == weftBfloat16) {
      value = op == weftProd ? 1.0 + static_cast<double>(static_cast<int>(r % 17) - 8) / 64
                             : static_cast<double>(static_cast<int>(r % 257) - 128) / 64;
    } else {
      const double unit = std::ldexp(static_cast<double>(r >> 11), -53) * 2 - 1;  // [-1, 1)
      value = op == weftProd ? 1 + unit / 8 : op == weftSum ? unit : unit * 1000;
    }
    storeFloat(data.data(), i, type, value);
  }
  return data;
}

// Checks `count` elements of `actual` against op over all ranks' inputs at elements [first, first+count).
// Integers must match exactly; floats within (p-1) rounding steps of the format (one per reduction) of
// the sum (or product) of magnitudes. Max and min are exact.
::testing::AssertionResult matchesReduction(const void* actual, const std::vector<std::vector<char>>& inputs,
                                            size_t first, size_t count, weftDataType_t type, weftRedOp_t op) {
  const size_t p = inputs.size();
  for (size_t i = 0; i < count; ++i) {
    if (!isFloat(type)) {
      uint64_t expected = loadInt(inputs[0].data(), first + i, type);
      for (size_t r = 1; r < p; ++r) {
        const uint64_t x = loadInt(inputs[r].data(), first + i, type);
        const bool less = isSigned(type) ? static_cast<int64_t>(x) < static_cast<int64_t>(expected) : x < expected;
        switch (op) {
          case weftProd:
            expected *= x;
            break;
          case weftMax:
            expected = less ? expected : x;
            break;
          case weftMin:
            expected = less ? x : expected;
            break;
          default:
            expected += x;
            break;
        }
      }
      const uint64_t got = loadInt(actual, i, type);
      if (truncated(got, type) != truncated(expected, type)) {
        return ::testing::AssertionFailure() << "element " << i << ": got " << truncated(got, type)
                                             << ", expected " << truncated(expected, type);
      }
      continue;
    }
    double expected = loadFloat(inputs[0].data(), first + i, type);
    double magnitude = std::fabs(expected);
    for (size_t r = 1; r < p; ++r) {
      const double x = loadFloat(inputs[r].data(), first + i, type);
      switch (op) {
        case weftProd:
          expected *= x;
          magnitude *= std::fabs(x);
          break;
        case weftMax:
          expected = std::max(expected, x);
          break;
        case weftMin:
          expected = std::min(expected, x);
          break;
        default:
          expected += x;
          magnitude += std::fabs(x);
          break;
      }
    }
    const bool exact = op == weftMax || op == weftMin;
    const double tolerance = exact ? 0 : static_cast<double>(p - 1) * epsilonOf(type) * magnitude;
    const double got = loadFloat(actual, i, type);
    if (!(std::fabs(got - expected) <= tolerance)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got << ", expected " << expected << " within " << tolerance;
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult sameBytes(const void* actual, const void* expected, size_t bytes, const char* what) {
  if (bytes == 0 || std::memcmp(actual, expected, bytes) == 0) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (static_cast<const char*>(actual)[i] == static_cast<const char*>(expected)[i]) ++i;
  return ::testing::AssertionFailure() << what << " differs from byte " << i << " of " << bytes;
}

// ---- Buffers with guard regions ------------------------------------------------------------------------

class GuardedBuffer {
 public:
  static constexpr size_t kGuardBytes = 64;
  static constexpr char kGuard = static_cast<char>(0xA5);
  static constexpr char kUnwritten = static_cast<char>(0x5A);

  explicit GuardedBuffer(size_t bytes) : storage_(bytes + 2 * kGuardBytes, kGuard), bytes_(bytes) {
    std::memset(data(), kUnwritten, bytes);
  }
  GuardedBuffer(const std::vector<char>& contents) : GuardedBuffer(contents.size()) {
    if (!contents.empty()) std::memcpy(data(), contents.data(), contents.size());
  }
  char* data() { return storage_.data() + kGuardBytes; }
  const char* data() const { return storage_.data() + kGuardBytes; }
  size_t bytes() const { return bytes_; }
  bool guardsIntact() const {
    for (size_t i = 0; i < kGuardBytes; ++i) {
      if (storage_[i] != kGuard || storage_[kGuardBytes + bytes_ + i] != kGuard) return false;
    }
    return true;
  }

 private:
  std::vector<char> storage_;
  size_t bytes_;
};

// ---- One collective call on every rank -----------------------------------------------------------------

enum class Algorithm {
  AllReduceRing,
  AllReduceRecursiveDoubling,
  AllReduceRabenseifner,
  ReduceScatterRing,
  ReduceScatterRabenseifner,
  AllGatherRing,
  AllGatherBruck,
  BroadcastBinomialTree,
  ReduceBinomialTree,
  AllToAllPairwise,
  // Hierarchical, on two layouts: hosts of two consecutive ranks (the last alone when p is odd: hosts of
  // different sizes), and two hosts taking alternate ranks.
  AllReduceHierarchicalPairs,
  AllReduceHierarchicalAlternate,
  AllGatherHierarchicalPairs,
  AllGatherHierarchicalAlternate,
  BroadcastHierarchicalPairs,
  BroadcastHierarchicalAlternate,
  // Rings in host order on the alternate layout (blocks stay at their ranks' positions).
  AllGatherRingHostOrder,
  ReduceScatterRingHostOrder,
};
enum class Collective { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, AllToAll };

struct AlgorithmInfo {
  const char* name;
  Collective collective;
  void (*run)(const CollArgs&, Channel&);
};
HostLayout pairsOf(int p) {
  std::vector<int> hostOf;
  for (int r = 0; r < p; ++r) hostOf.push_back(r / 2);
  return HostLayout::fromHostOf(hostOf);
}
HostLayout alternateOf(int p) {
  std::vector<int> hostOf;
  for (int r = 0; r < p; ++r) hostOf.push_back(r % 2);
  return HostLayout::fromHostOf(hostOf);
}
// The hierarchical AllReduce with its default choice between hosts (by size).
void allReduceHierarchicalBySize(const CollArgs& args, Channel& channel, const HostLayout& layout) {
  allReduceHierarchical(args, channel, layout);
}
// A ring in host order over the alternate layout, as the communicator runs one.
template <void (*ring)(const CollArgs&, Channel&, std::span<const int>)>
void inHostOrder(const CollArgs& args, Channel& channel) {
  const std::vector<int> order = alternateOf(channel.size()).hostOrder();
  SubChannel sub(channel, order);
  ring(args, sub, order);
}
template <void (*algorithm)(const CollArgs&, Channel&, const HostLayout&), HostLayout (*layoutOf)(int)>
void onLayout(const CollArgs& args, Channel& channel) {
  algorithm(args, channel, layoutOf(channel.size()));
}

AlgorithmInfo infoOf(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::AllReduceRing:
      return {"AllReduceRing", Collective::AllReduce, allReduceRing};
    case Algorithm::AllReduceRecursiveDoubling:
      return {"AllReduceRecursiveDoubling", Collective::AllReduce, allReduceRecursiveDoubling};
    case Algorithm::AllReduceRabenseifner:
      return {"AllReduceRabenseifner", Collective::AllReduce, allReduceRabenseifner};
    case Algorithm::ReduceScatterRing:
      return {"ReduceScatterRing", Collective::ReduceScatter, reduceScatterRing};
    case Algorithm::ReduceScatterRabenseifner:
      return {"ReduceScatterRabenseifner", Collective::ReduceScatter, reduceScatterRabenseifner};
    case Algorithm::AllGatherRing:
      return {"AllGatherRing", Collective::AllGather, allGatherRing};
    case Algorithm::AllGatherBruck:
      return {"AllGatherBruck", Collective::AllGather, allGatherBruck};
    case Algorithm::BroadcastBinomialTree:
      return {"BroadcastBinomialTree", Collective::Broadcast, broadcastBinomialTree};
    case Algorithm::ReduceBinomialTree:
      return {"ReduceBinomialTree", Collective::Reduce, reduceBinomialTree};
    case Algorithm::AllToAllPairwise:
      return {"AllToAllPairwise", Collective::AllToAll, allToAllPairwise};
    case Algorithm::AllReduceHierarchicalPairs:
      return {"AllReduceHierarchicalPairs", Collective::AllReduce, onLayout<allReduceHierarchicalBySize, pairsOf>};
    case Algorithm::AllReduceHierarchicalAlternate:
      return {"AllReduceHierarchicalAlternate", Collective::AllReduce,
              onLayout<allReduceHierarchicalBySize, alternateOf>};
    case Algorithm::AllGatherHierarchicalPairs:
      return {"AllGatherHierarchicalPairs", Collective::AllGather, onLayout<allGatherHierarchical, pairsOf>};
    case Algorithm::AllGatherHierarchicalAlternate:
      return {"AllGatherHierarchicalAlternate", Collective::AllGather,
              onLayout<allGatherHierarchical, alternateOf>};
    case Algorithm::BroadcastHierarchicalPairs:
      return {"BroadcastHierarchicalPairs", Collective::Broadcast, onLayout<broadcastHierarchical, pairsOf>};
    case Algorithm::AllGatherRingHostOrder:
      return {"AllGatherRingHostOrder", Collective::AllGather, inHostOrder<allGatherRingOrdered>};
    case Algorithm::ReduceScatterRingHostOrder:
      return {"ReduceScatterRingHostOrder", Collective::ReduceScatter, inHostOrder<reduceScatterRingOrdered>};
    case Algorithm::BroadcastHierarchicalAlternate:
      return {"BroadcastHierarchicalAlternate", Collective::Broadcast,
              onLayout<broadcastHierarchical, alternateOf>};
  }
  return {};
}
bool reduces(Collective c) {
  return c == Collective::AllReduce || c == Collective::ReduceScatter || c == Collective::Reduce;
}
bool rooted(Collective c) { return c == Collective::Broadcast || c == Collective::Reduce; }

struct Case {
  Algorithm algorithm;
  int p;
  size_t count;
  weftDataType_t type;
  weftRedOp_t op;
  bool inPlace;
  int root;
};
std::string describe(const Case& c) {
  return fmt::format("{} p={} count={} type={} op={} {} root={}", infoOf(c.algorithm).name, c.p, c.count,
                     dataTypeName(c.type), redOpName(c.op), c.inPlace ? "in-place" : "out-of-place", c.root);
}

// Runs one case on every rank and checks everything; returns what went wrong.
::testing::AssertionResult runCase(const Case& c, Delivery delivery = Delivery::Synchronous,
                                   std::vector<size_t>* bytesSent = nullptr,
                                   const HostLayout* bytesBetweenHostsOf = nullptr,
                                   size_t* bytesBetweenHosts = nullptr) {
  const AlgorithmInfo info = infoOf(c.algorithm);
  const int p = c.p;
  const size_t elemSize = dataTypeSize(c.type);
  const size_t n = c.count * elemSize;
  const bool blockedInput =
      info.collective == Collective::ReduceScatter || info.collective == Collective::AllToAll;
  const bool blockedOutput = info.collective == Collective::AllGather || info.collective == Collective::AllToAll;
  const size_t inputCount = blockedInput ? p * c.count : c.count;
  const size_t outputBytes = blockedOutput ? p * n : n;

  std::vector<std::vector<char>> inputs;
  for (int r = 0; r < p; ++r) inputs.push_back(makeInput(inputCount, c.type, c.op, (r + 1) * 7919 + c.count));

  // Each rank's buffers. In place, the input is written where the C ABI says and `sendbuff` points there.
  std::vector<GuardedBuffer> send, recv;
  std::vector<const void*> sendPointers(p);
  std::vector<void*> recvPointers(p);
  for (int r = 0; r < p; ++r) {
    const bool isRoot = r == c.root;
    switch (info.collective) {
      case Collective::AllReduce:
      case Collective::AllToAll:
        send.emplace_back(inputs[r]);
        recv.emplace_back(c.inPlace ? inputs[r] : std::vector<char>(outputBytes, GuardedBuffer::kUnwritten));
        break;
      case Collective::Broadcast:
        send.emplace_back(isRoot ? inputs[r] : std::vector<char>());
        recv.emplace_back(c.inPlace && isRoot ? inputs[r] : std::vector<char>(n, GuardedBuffer::kUnwritten));
        break;
      case Collective::Reduce:
        send.emplace_back(inputs[r]);
        recv.emplace_back(c.inPlace ? inputs[r] : std::vector<char>(isRoot ? n : 0, GuardedBuffer::kUnwritten));
        break;
      case Collective::AllGather: {
        send.emplace_back(inputs[r]);
        std::vector<char> output(outputBytes, GuardedBuffer::kUnwritten);
        if (c.inPlace && n != 0) std::memcpy(output.data() + r * n, inputs[r].data(), n);
        recv.emplace_back(output);
        break;
      }
      case Collective::ReduceScatter:
        send.emplace_back(inputs[r]);
        recv.emplace_back(std::vector<char>(n, GuardedBuffer::kUnwritten));
        break;
    }
  }
  for (int r = 0; r < p; ++r) {
    const bool isRoot = r == c.root;
    sendPointers[r] = send[r].data();
    recvPointers[r] = recv[r].data();
    switch (info.collective) {
      case Collective::AllReduce:
      case Collective::AllToAll:
      case Collective::Reduce:
        if (c.inPlace) sendPointers[r] = recvPointers[r];
        if (info.collective == Collective::Reduce && !c.inPlace && !isRoot) recvPointers[r] = nullptr;
        break;
      case Collective::Broadcast:
        if (c.inPlace)
          sendPointers[r] = recvPointers[r];
        else if (!isRoot)
          sendPointers[r] = nullptr;
        break;
      case Collective::AllGather:
        if (c.inPlace) sendPointers[r] = recv[r].data() + r * n;
        break;
      case Collective::ReduceScatter:
        if (c.inPlace) recvPointers[r] = send[r].data() + r * n;
        break;
    }
  }

  MemoryWorld world(p, delivery);
  try {
    world.run([&](MemoryChannel& channel) {
      const int r = channel.rank();
      CollArgs args;
      args.sendbuff = sendPointers[r];
      args.recvbuff = recvPointers[r];
      args.count = c.count;
      args.type = c.type;
      args.op = c.op;
      args.root = c.root;
      info.run(args, channel);
    });
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << describe(c) << ": " << e.what();
  }
  if (bytesSent) *bytesSent = world.bytesSent();
  if (bytesBetweenHosts) {
    *bytesBetweenHosts = 0;
    for (int source = 0; source < p; ++source) {
      for (int destination = 0; destination < p; ++destination) {
        if (bytesBetweenHostsOf->hostOf(source) != bytesBetweenHostsOf->hostOf(destination))
          *bytesBetweenHosts += world.bytesBetween(source, destination);
      }
    }
  }

  auto failure = [&](int r) { return ::testing::AssertionFailure() << describe(c) << ", rank " << r << ": "; };
  for (int r = 0; r < p; ++r) {
    if (!send[r].guardsIntact() || !recv[r].guardsIntact()) return failure(r) << "wrote outside its buffers";
    const bool isRoot = r == c.root;
    // Whatever is sendbuff-only must be unchanged.
    if (!c.inPlace || info.collective == Collective::Reduce) {
      const GuardedBuffer& input = c.inPlace ? recv[r] : send[r];
      if (info.collective != Collective::Broadcast && !(c.inPlace && isRoot)) {
        if (auto same = sameBytes(input.data(), inputs[r].data(), inputs[r].size(), "sendbuff"); !same) {
          return failure(r) << same.message();
        }
      }
    }
    ::testing::AssertionResult ok = ::testing::AssertionSuccess();
    switch (info.collective) {
      case Collective::AllReduce:
        ok = matchesReduction(recv[r].data(), inputs, 0, c.count, c.type, c.op);
        if (ok) ok = sameBytes(recv[r].data(), recv[0].data(), n, "result (not bit-identical to rank 0's)");
        break;
      case Collective::Reduce:
        if (isRoot)
          ok = matchesReduction(recv[r].data(), inputs, 0, c.count, c.type, c.op);
        else if (!c.inPlace && recv[r].bytes() != 0)
          ok = ::testing::AssertionFailure() << "non-root recvbuff";
        break;
      case Collective::ReduceScatter:
        if (c.inPlace) {
          ok = matchesReduction(send[r].data() + r * n, inputs, r * c.count, c.count, c.type, c.op);
          // The rest of the input is sendbuff only.
          if (ok) ok = sameBytes(send[r].data(), inputs[r].data(), r * n, "sendbuff before recvbuff");
          if (ok) {
            ok = sameBytes(send[r].data() + (r + 1) * n, inputs[r].data() + (r + 1) * n, (p - r - 1) * n,
                           "sendbuff after recvbuff");
          }
        } else {
          ok = matchesReduction(recv[r].data(), inputs, r * c.count, c.count, c.type, c.op);
        }
        break;
      case Collective::AllGather:
        for (int q = 0; q < p && ok; ++q) ok = sameBytes(recv[r].data() + q * n, inputs[q].data(), n, "a block");
        break;
      case Collective::Broadcast:
        ok = sameBytes(recv[r].data(), inputs[c.root].data(), n, "result");
        break;
      case Collective::AllToAll:
        for (int q = 0; q < p && ok; ++q) {
          ok = sameBytes(recv[r].data() + q * n, inputs[q].data() + r * n, n, "a block");
        }
        break;
    }
    if (!ok) return failure(r) << ok.message();
  }
  return ::testing::AssertionSuccess();
}

std::vector<int> rootsFor(Collective collective, int p) {
  if (!rooted(collective)) return {0};
  if (p <= 4) {
    std::vector<int> all;
    for (int r = 0; r < p; ++r) all.push_back(r);
    return all;
  }
  return {0, 1, p / 2, p - 1};
}

// Runs `visit` over every case of the matrix for one algorithm and rank count: every type x op for small
// counts; for the largest count every type with sum and every op with float32 and int32.
void forEachCase(Algorithm algorithm, int p, const std::vector<size_t>& counts,
                 const std::function<bool(weftDataType_t, weftRedOp_t, size_t)>& include,
                 const std::function<void(const Case&)>& visit) {
  const Collective collective = infoOf(algorithm).collective;
  for (size_t count : counts) {
    for (weftDataType_t type : kTypes) {
      for (weftRedOp_t op : kOps) {
        if (!reduces(collective) && op != weftSum) continue;
        if (!include(type, op, count)) continue;
        for (bool inPlace : {false, true}) {
          for (int root : rootsFor(collective, p)) visit(Case{algorithm, p, count, type, op, inPlace, root});
        }
      }
    }
  }
}

// ALGOTEST_MATRIX=sizes, set by the sanitized CI run (tests/sanitizers/run_sanitized.sh): one type per
// element size with sum, and every op on float32. The schedules move bytes by element size whatever the
// values, which is all the sanitizers look at; the ordinary build checks the whole matrix (under ASan it
// took 282 of the subset's 581 test-seconds, 2026-11-29). Unset or "full": the whole matrix.
bool sizesOnly() {
  static const bool sizes = [] {
    const char* matrix = std::getenv("ALGOTEST_MATRIX");
    if (matrix == nullptr || *matrix == '\0' || std::string_view(matrix) == "full") return false;
    if (std::string_view(matrix) == "sizes") return true;
    std::fprintf(stderr, "ALGOTEST_MATRIX=%s: expected full or sizes\n", matrix);
    std::abort();
  }();
  return sizes;
}

bool standardMatrix(weftDataType_t type, weftRedOp_t op, size_t count) {
  if (sizesOnly()) {
    const bool onePerSize = type == weftInt8 || type == weftFloat16 || type == weftFloat32 || type == weftFloat64;
    return (onePerSize && op == weftSum) || type == weftFloat32;
  }
  return count < kLargestCount || op == weftSum || type == weftFloat32 || type == weftInt32;
}

// Sets the pipeline segment size for one test.
class SegmentBytes {
 public:
  explicit SegmentBytes(size_t bytes) : saved_(gPipelineSegmentBytes.exchange(bytes)) {}
  ~SegmentBytes() { gPipelineSegmentBytes = saved_; }

 private:
  size_t saved_;
};

constexpr int kMaxFailuresPerTest = 5;

std::vector<Algorithm> allAlgorithms() {
  return {Algorithm::AllReduceRing,
          Algorithm::AllReduceRecursiveDoubling,
          Algorithm::AllReduceRabenseifner,
          Algorithm::ReduceScatterRing,
          Algorithm::ReduceScatterRabenseifner,
          Algorithm::AllGatherRing,
          Algorithm::AllGatherBruck,
          Algorithm::BroadcastBinomialTree,
          Algorithm::ReduceBinomialTree,
          Algorithm::AllToAllPairwise,
          Algorithm::AllReduceHierarchicalPairs,
          Algorithm::AllReduceHierarchicalAlternate,
          Algorithm::AllGatherHierarchicalPairs,
          Algorithm::AllGatherHierarchicalAlternate,
          Algorithm::BroadcastHierarchicalPairs,
          Algorithm::BroadcastHierarchicalAlternate,
          Algorithm::AllGatherRingHostOrder,
          Algorithm::ReduceScatterRingHostOrder};
}
std::vector<Algorithm> pipelinedAlgorithms() {
  return {Algorithm::AllReduceRing,
          Algorithm::ReduceScatterRing,
          Algorithm::AllGatherRing,
          Algorithm::AllGatherRingHostOrder,
          Algorithm::ReduceScatterRingHostOrder,
          Algorithm::BroadcastBinomialTree,
          Algorithm::ReduceBinomialTree,
          Algorithm::AllReduceRabenseifner,
          Algorithm::ReduceScatterRabenseifner,
          Algorithm::AllGatherBruck,
          Algorithm::AllToAllPairwise};
}

using Param = std::tuple<Algorithm, int>;
// How gtest (and CTest's test list) shows a parameter: the algorithm's name, not its bytes.
void PrintTo(Algorithm algorithm, std::ostream* out) { *out << infoOf(algorithm).name; }
std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return fmt::format("{}_p{}", infoOf(std::get<0>(info.param)).name, std::get<1>(info.param));
}

// ---- The matrix ----------------------------------------------------------------------------------------

class AlgorithmTest : public ::testing::TestWithParam<Param> {};

TEST_P(AlgorithmTest, MatchesReference) {
  const auto [algorithm, p] = GetParam();
  int failures = 0;
  forEachCase(algorithm, p, {std::begin(kCounts), std::end(kCounts)}, standardMatrix, [&](const Case& c) {
    if (failures >= kMaxFailuresPerTest) return;
    auto result = runCase(c);
    if (!result) {
      ADD_FAILURE() << result.message();
      ++failures;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(All, AlgorithmTest,
                         ::testing::Combine(::testing::ValuesIn(allAlgorithms()), ::testing::Range(1, 9)),
                         paramName);

// The same over a Channel that delivers sends at once (the matrix above uses the strictest one).
TEST_P(AlgorithmTest, EagerDelivery) {
  const auto [algorithm, p] = GetParam();
  int failures = 0;
  auto someTypes = [](weftDataType_t type, weftRedOp_t op, size_t) {
    return (type == weftFloat32 && op == weftSum) || (type == weftInt32 && op == weftMax) ||
           (type == weftBfloat16 && op == weftProd);
  };
  forEachCase(algorithm, p, {1, 7, 1000}, someTypes, [&](const Case& c) {
    if (failures >= kMaxFailuresPerTest) return;
    auto result = runCase(c, Delivery::Eager);
    if (!result) {
      ADD_FAILURE() << result.message();
      ++failures;
    }
  });
}

// The pipelined algorithms with tiny segments: many segments per block, receive windows wrapping round,
// scratch slots reused, and (with one-element segments) empty segments when blocks differ in size.
class PipelineTest : public ::testing::TestWithParam<Param> {};

TEST_P(PipelineTest, ManySegments) {
  const auto [algorithm, p] = GetParam();
  int failures = 0;
  auto visit = [&](const Case& c) {
    if (failures >= kMaxFailuresPerTest) return;
    auto result = runCase(c);
    if (!result) {
      ADD_FAILURE() << result.message();
      ++failures;
    }
  };
  auto someTypes = [](weftDataType_t type, weftRedOp_t op, size_t) {
    return (type == weftFloat32 && op == weftSum) || (type == weftInt8 && op == weftProd) ||
           (type == weftFloat16 && op == weftMax) || (type == weftUint64 && op == weftMin);
  };
  {
    const SegmentBytes segments(64);
    forEachCase(algorithm, p, {1, 7, 64, 1000, 4099}, someTypes, visit);
  }
  {
    const SegmentBytes segments(1);
    forEachCase(algorithm, p, {1, 3, 7, 20, 64}, someTypes, visit);
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelined, PipelineTest,
                         ::testing::Combine(::testing::ValuesIn(pipelinedAlgorithms()), ::testing::Range(1, 9)),
                         paramName);

// Megabyte messages at the default segment size: several segments per block.
TEST(LargeMessages, DefaultSegments) {
  const size_t segmentFloats = gPipelineSegmentBytes / 4;
  const Case cases[] = {
      {Algorithm::AllReduceRing, 3, 3 * segmentFloats * 5 / 2 + 1, weftFloat32, weftSum, false, 0},
      {Algorithm::AllReduceRing, 4, 4 * segmentFloats * 3 / 2 + 3, weftFloat32, weftSum, true, 0},
      {Algorithm::ReduceScatterRing, 4, segmentFloats * 3 / 2 + 1, weftFloat32, weftSum, false, 0},
      {Algorithm::AllGatherRing, 4, segmentFloats * 3 / 2 + 1, weftFloat32, weftSum, true, 0},
      {Algorithm::BroadcastBinomialTree, 5, segmentFloats * 5 / 2 + 1, weftFloat32, weftSum, false, 2},
      {Algorithm::ReduceBinomialTree, 5, segmentFloats * 5 / 2 + 1, weftFloat32, weftSum, false, 3},
      {Algorithm::AllReduceRabenseifner, 6, segmentFloats * 2 + 1, weftFloat32, weftSum, false, 0},
      {Algorithm::AllReduceRabenseifner, 2, segmentFloats * 9 + 5, weftFloat32, weftSum, true, 0},
      {Algorithm::ReduceScatterRabenseifner, 5, segmentFloats * 3 / 2 + 1, weftFloat32, weftSum, false, 0},
      {Algorithm::AllGatherBruck, 2, segmentFloats * 9 + 5, weftFloat32, weftSum, false, 0},
      {Algorithm::AllGatherBruck, 3, segmentFloats * 3 + 7, weftFloat32, weftSum, true, 0},
      {Algorithm::AllToAllPairwise, 2, segmentFloats * 9 + 5, weftFloat32, weftSum, false, 0},
      {Algorithm::AllToAllPairwise, 2, segmentFloats * 9 + 5, weftFloat32, weftSum, true, 0},
  };
  for (const Case& c : cases) EXPECT_TRUE(runCase(c));
}

// Rabenseifner's, Bruck's and AllToAll's exchanges at 2 ranks: in segments where the channel cuts large messages
// (tcp), whole where it does not (shm), with the same results.
TEST(LargeMessages, WholeWhereTheTransportDoesNotCut) {
  const size_t count = gPipelineSegmentBytes / 4 * 9 + 5;  // a half of four and a half segments
  const size_t segments = ceilDiv(count / 2 * 4, gPipelineSegmentBytes);
  for (bool cuts : {true, false}) {
    MemoryWorld world(2, Delivery::Synchronous);
    world.setCutsLargeMessages(cuts);
    std::vector<std::vector<float>> inputs(2), sums(2), gathered(2);
    for (int r = 0; r < 2; ++r) {
      inputs[r].resize(count);
      for (size_t i = 0; i < count; ++i) inputs[r][i] = static_cast<float>((r + 1) * (i % 13));
      sums[r].assign(count, -1.0f);
      gathered[r].assign(2 * count, -1.0f);
    }
    ASSERT_NO_THROW(world.run([&](MemoryChannel& channel) {
      const int r = channel.rank();
      allReduceRabenseifner({inputs[r].data(), sums[r].data(), count, weftFloat32, weftSum}, channel);
    }));
    // One halving and one doubling message each, or each of them in segments.
    EXPECT_EQ(world.messagesSent()[0], cuts ? 2 * segments : 2) << "cuts " << cuts;
    ASSERT_NO_THROW(world.run([&](MemoryChannel& channel) {
      const int r = channel.rank();
      allGatherBruck({inputs[r].data(), gathered[r].data(), count, weftFloat32, weftSum}, channel);
    }));
    EXPECT_EQ(world.messagesSent()[0], cuts ? ceilDiv(count * 4, gPipelineSegmentBytes) : 1) << "cuts " << cuts;
    // AllToAll: rank r's gathered vector as its input, block j for rank j.
    std::vector<std::vector<float>> exchanged(2, std::vector<float>(2 * count, -1.0f));
    ASSERT_NO_THROW(world.run([&](MemoryChannel& channel) {
      const int r = channel.rank();
      allToAllPairwise({gathered[r].data(), exchanged[r].data(), count, weftFloat32, weftSum}, channel);
    }));
    EXPECT_EQ(world.messagesSent()[0], cuts ? ceilDiv(count * 4, gPipelineSegmentBytes) : 1) << "cuts " << cuts;
    for (int r = 0; r < 2; ++r) {
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(sums[r][i], static_cast<float>(3 * (i % 13))) << "rank " << r << " element " << i;
        ASSERT_EQ(gathered[r][i], inputs[0][i]) << "rank " << r << " element " << i;
        ASSERT_EQ(gathered[r][count + i], inputs[1][i]) << "rank " << r << " element " << i;
        for (int from = 0; from < 2; ++from) {
          ASSERT_EQ(exchanged[r][from * count + i], gathered[from][r * count + i])
              << "rank " << r << " from " << from;
        }
      }
    }
  }
}

// The binomial trees' pipelines: segments four times the ring's where every link streams through socket
// buffers (tcp), the ring's where some link copies large messages once (shm), where a Broadcast's leaf child
// of the root gets the message whole; the same results either way.
TEST(LargeMessages, TreesTakeLargerSegmentsOverSockets) {
  const size_t count = gPipelineSegmentBytes / 4 * 9 + 5;  // nine and a bit ring segments
  const size_t bytes = count * 4;
  for (bool sockets : {true, false}) {
    MemoryWorld world(2, Delivery::Synchronous);
    world.setCutsLargeMessages(sockets);
    std::vector<std::vector<float>> inputs(2), outputs(2);
    for (int r = 0; r < 2; ++r) {
      inputs[r].resize(count);
      for (size_t i = 0; i < count; ++i) inputs[r][i] = static_cast<float>((r + 1) * (i % 11));
      outputs[r].assign(count, -1.0f);
    }
    ASSERT_NO_THROW(world.run([&](MemoryChannel& channel) {
      const int r = channel.rank();
      CollArgs args{inputs[r].data(), outputs[r].data(), count, weftFloat32, weftSum};
      args.root = 0;
      reduceBinomialTree(args, channel);
    }));
    const size_t segment = (sockets ? 4 : 1) * gPipelineSegmentBytes;
    EXPECT_EQ(world.messagesSent()[1], ceilDiv(bytes, segment)) << "sockets " << sockets;
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(outputs[0][i], static_cast<float>(3 * (i % 11))) << "sockets " << sockets << " element " << i;
    }
    // Broadcast from rank 1: the root's only child gets the message whole where links copy once.
    outputs[0].assign(count, -1.0f);
    ASSERT_NO_THROW(world.run([&](MemoryChannel& channel) {
      const int r = channel.rank();
      CollArgs args{inputs[r].data(), outputs[r].data(), count, weftFloat32, weftSum};
      args.root = 1;
      broadcastBinomialTree(args, channel);
    }));
    EXPECT_EQ(world.messagesSent()[1], sockets ? ceilDiv(bytes, segment) : 1) << "sockets " << sockets;
    EXPECT_EQ(outputs[0], inputs[1]) << "sockets " << sockets;
  }
}

// weftAvg is mapped to sum by the caller; should it arrive, it reduces like sum.
TEST(Ops, AvgReducesLikeSum) {
  for (Algorithm algorithm :
       {Algorithm::AllReduceRing, Algorithm::AllReduceRecursiveDoubling, Algorithm::AllReduceRabenseifner,
        Algorithm::ReduceScatterRing, Algorithm::ReduceScatterRabenseifner, Algorithm::ReduceBinomialTree}) {
    for (weftDataType_t type : {weftFloat32, weftInt32}) {
      EXPECT_TRUE(runCase({algorithm, 3, 7, type, weftAvg, false, 1}));  // checked against a sum
    }
  }
}

// ---- Bytes on the wire, as each algorithm's comment states --------------------------------------------

size_t total(const std::vector<size_t>& v) {
  size_t sum = 0;
  for (size_t x : v) sum += x;
  return sum;
}
int log2Floor(int p) {
  int k = 0;
  while ((2 << k) <= p) ++k;
  return k;
}
int log2Ceil(int p) { return (1 << log2Floor(p)) == p ? log2Floor(p) : log2Floor(p) + 1; }

TEST(WireBytes, AsDocumented) {
  const size_t count = 840;  // divisible by 1..8
  const size_t n = count * 4;
  for (int p = 1; p <= 8; ++p) {
    SCOPED_TRACE(p);
    const size_t pof2 = size_t{1} << log2Floor(p);
    const size_t rem = p - pof2;
    std::vector<size_t> sent;
    auto run = [&](Algorithm algorithm, int root = 0) {
      sent.clear();
      EXPECT_TRUE(runCase({algorithm, p, count, weftFloat32, weftSum, false, root}, Delivery::Eager, &sent));
    };
    run(Algorithm::AllReduceRing);
    for (size_t bytes : sent) EXPECT_EQ(bytes, 2 * (p - 1) * n / p);
    run(Algorithm::ReduceScatterRing);  // n = p * count elements here
    for (size_t bytes : sent) EXPECT_EQ(bytes, (p - 1) * n);
    run(Algorithm::ReduceScatterRabenseifner);
    EXPECT_EQ(total(sent), rem * p * n + (pof2 - 1) * p * n + rem * n);  // fold, halving, unfold
    for (Algorithm algorithm :
         {Algorithm::AllGatherRing, Algorithm::AllGatherBruck, Algorithm::AllToAllPairwise}) {
      run(algorithm);
      for (size_t bytes : sent) EXPECT_EQ(bytes, (p - 1) * n);
    }
    run(Algorithm::AllReduceRecursiveDoubling);
    EXPECT_EQ(total(sent), (pof2 * log2Floor(p) + 2 * rem) * n);
    run(Algorithm::AllReduceRabenseifner);
    EXPECT_EQ(total(sent), (2 * (pof2 - 1) + 2 * rem) * n);
    run(Algorithm::BroadcastBinomialTree, p - 1);
    EXPECT_EQ(total(sent), (p - 1) * n);
    EXPECT_EQ(sent[p - 1], log2Ceil(p) * n);
    run(Algorithm::ReduceBinomialTree, p / 2);
    EXPECT_EQ(total(sent), (p - 1) * n);
    EXPECT_EQ(sent[p / 2], 0u);
  }
}

// Bytes between hosts, against each algorithm's comment and against the flat algorithm it replaces.
TEST(WireBytes, HierarchicalBetweenHosts) {
  for (int p : {2, 4, 6, 8}) {
    SCOPED_TRACE(p);
    for (HostLayout (*layoutOf)(int) : {pairsOf, alternateOf}) {
      const HostLayout layout = layoutOf(p);
      const bool pairs = layoutOf == pairsOf;
      const size_t hosts = layout.numHosts();
      auto between = [&](Algorithm algorithm, size_t count) {
        size_t bytes = 0;
        EXPECT_TRUE(runCase({algorithm, p, count, weftFloat32, weftSum, false, 0}, Delivery::Eager, nullptr,
                            &layout, &bytes));
        return bytes;
      };
      const Algorithm allReduce =
          pairs ? Algorithm::AllReduceHierarchicalPairs : Algorithm::AllReduceHierarchicalAlternate;
      // Small slices go between hosts by recursive doubling (H not a power of two: fold and unfold), n/L
      // bytes per message, L slices.
      const size_t small = 840;  // divisible by 1..8
      const size_t pof2 = size_t{1} << log2Floor(static_cast<int>(hosts));
      EXPECT_EQ(between(allReduce, small),
                (pof2 * log2Floor(static_cast<int>(hosts)) + 2 * (hosts - pof2)) * small * 4)
          << "allreduce, small";
      // Large slices go by ring: 2(H-1)/H * n/L per rank, 2(H-1) * n in all; a flat ring in host order
      // sends 2(p-1)/p * n over each of its H edges between hosts.
      const size_t large = 840 * 128;
      const size_t hierarchical = between(allReduce, large);
      EXPECT_EQ(hierarchical, 2 * (hosts - 1) * large * 4) << "allreduce, large";
      EXPECT_LE(hierarchical, between(Algorithm::AllReduceRing, large));

      const size_t gather = between(
          pairs ? Algorithm::AllGatherHierarchicalPairs : Algorithm::AllGatherHierarchicalAlternate, small);
      EXPECT_EQ(gather, static_cast<size_t>(p) * (hosts - 1) * small * 4) << "allgather";
      EXPECT_LE(gather, between(Algorithm::AllGatherRing, small));
      if (!pairs) {
        // Rings in host order cross between hosts twice, not p times: (p-1) * n over each crossing edge
        // for AllGather (n = one block), and the same for ReduceScatter's partial results.
        EXPECT_EQ(between(Algorithm::AllGatherRingHostOrder, small), 2 * (p - 1) * small * 4) << "allgather ring";
        EXPECT_EQ(between(Algorithm::ReduceScatterRingHostOrder, small), 2 * (p - 1) * small * 4)
            << "reducescatter ring";
      }
      const size_t broadcast = between(
          pairs ? Algorithm::BroadcastHierarchicalPairs : Algorithm::BroadcastHierarchicalAlternate, small);
      EXPECT_EQ(broadcast, (hosts - 1) * small * 4) << "broadcast";
    }
  }
}

// ---- Barrier -------------------------------------------------------------------------------------------

TEST(Barrier, NobodyLeavesEarly) {
  for (int p = 1; p <= 8; ++p) {
    constexpr int kRounds = 20;
    std::atomic<int> arrived{0};
    std::atomic<int> early{0};
    MemoryWorld world(p, Delivery::Synchronous);
    ASSERT_NO_THROW(world.run([&](MemoryChannel& channel) {
      for (int round = 0; round < kRounds; ++round) {
        // Stagger the arrivals so a barrier that lets a rank through early would be caught.
        if ((round + channel.rank()) % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
        arrived.fetch_add(1);
        barrierDissemination(channel);
        if (arrived.load() < (round + 1) * p) early.fetch_add(1);
      }
    })) << "p="
        << p;
    EXPECT_EQ(early.load(), 0) << "p=" << p;
    EXPECT_EQ(total(world.messagesSent()), static_cast<size_t>(kRounds * p * log2Ceil(p))) << "p=" << p;
  }
}

// ---- The test Channel itself ---------------------------------------------------------------------------

TEST(MemoryChannel, SizeMismatchThrows) {
  MemoryWorld world(2, Delivery::Eager, std::chrono::milliseconds(2000));
  char buffer[8] = {};
  try {
    world.run([&](MemoryChannel& channel) {
      if (channel.rank() == 0)
        channel.send(1, buffer, 8);
      else
        channel.recv(0, buffer, 4);
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), weftInternalError) << e.what();
  }
}

TEST(MemoryChannel, TimeoutThrows) {
  MemoryWorld world(2, Delivery::Eager, std::chrono::milliseconds(100));
  char buffer[4] = {};
  try {
    world.run([&](MemoryChannel& channel) {
      if (channel.rank() == 1) channel.recv(0, buffer, 4);
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), weftTimeout) << e.what();
  }
}

TEST(MemoryChannel, SendBufferChangedInFlightThrows) {
  MemoryWorld world(2, Delivery::Eager, std::chrono::milliseconds(2000));
  try {
    world.run([&](MemoryChannel& channel) {
      char buffer[4] = {1, 2, 3, 4};
      if (channel.rank() == 0) {
        Request r = channel.isend(1, buffer, 4);
        buffer[0] = 9;
        channel.waitAll({&r, 1});
      } else {
        channel.recv(0, buffer, 4);
      }
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), weftInternalError) << e.what();
  }
}

TEST(MemoryChannel, SynchronousSendsMoveOnlyWhenWaitedFor) {
  auto body = [](MemoryChannel& channel) {
    const int other = 1 - channel.rank();
    const int out = channel.rank();
    int in = -1;
    Request send = channel.isend(other, &out, sizeof out);
    channel.recv(other, &in, sizeof in);  // not watching the send: it never moves
    channel.waitAll({&send, 1});
  };
  MemoryWorld eager(2, Delivery::Eager);
  EXPECT_NO_THROW(eager.run(body));
  MemoryWorld strict(2, Delivery::Synchronous, std::chrono::milliseconds(100));
  try {
    strict.run(body);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), weftTimeout) << e.what();
  }
}

TEST(MemoryChannel, ReceivesMatchInPostingOrder) {
  MemoryWorld world(2);
  world.run([&](MemoryChannel& channel) {
    if (channel.rank() == 0) {
      const int a = 1, b = 2;
      channel.send(1, &a, sizeof a);
      channel.send(1, &b, sizeof b);
    } else {
      int first = 0, second = 0;
      Request r[2] = {channel.irecv(0, &first, sizeof first), channel.irecv(0, &second, sizeof second)};
      channel.waitAll({&r[1], 1});  // waiting for the second still fills the first from the first message
      channel.waitAll({&r[0], 1});
      EXPECT_EQ(first, 1);
      EXPECT_EQ(second, 2);
    }
  });
}

TEST(MemoryChannel, UnreceivedMessagesFail) {
  MemoryWorld world(2);
  const int a = 1;
  EXPECT_THROW(world.run([&](MemoryChannel& channel) {
    if (channel.rank() == 0) channel.send(1, &a, sizeof a);
  }),
               Error);
}

// ---- The rings on a fused operation's calls (CollArgs::calls) ------------------------------------------

// Runs `collective`'s ring over `counts.size()` calls per rank (call i in place when inPlace(i)), each in
// guarded buffers of its own, in rank order or in host order over the alternate layout. Rank r's input is
// one vector of the calls' total C (AllReduce, AllGather) or p blocks of C (ReduceScatter) cut into the
// calls: call i has elements [o_i, o_i + c_i) of it (of each block, as its own blocks). Checks each call's
// result against the reference over its slice, AllReduce's bit-identity across ranks, inputs left alone and
// nothing written outside the buffers. Returns what went wrong.
::testing::AssertionResult runRingOnCalls(Collective collective, int p, const std::vector<size_t>& counts,
                                          weftDataType_t type, weftRedOp_t op, bool hostOrder,
                                          const std::function<bool(size_t)>& inPlace) {
  const size_t elemSize = dataTypeSize(type);
  const auto blocks = static_cast<size_t>(p);
  const size_t inBlocks = collective == Collective::ReduceScatter ? blocks : 1;
  const size_t outBlocks = collective == Collective::AllGather ? blocks : 1;
  size_t total = 0;
  for (size_t count : counts) total += count;
  std::vector<std::vector<char>> inputs;
  for (int r = 0; r < p; ++r) inputs.push_back(makeInput(inBlocks * total, type, op, (r + 1) * 104729 + total));
  // Call i's input for rank r: its slice of each block of the whole input, block after block.
  auto callInput = [&](int r, size_t i, size_t start) {
    std::vector<char> in;
    for (size_t b = 0; b < inBlocks; ++b) {
      const char* first = inputs[r].data() + (b * total + start) * elemSize;
      in.insert(in.end(), first, first + counts[i] * elemSize);
    }
    return in;
  };
  const std::vector<int> order = alternateOf(p).hostOrder();
  // send[r][i], recv[r][i]: call i of rank r. In place, the input lives in recv (AllGather: at the rank's
  // block) or the output in send (ReduceScatter). Blocks stay at their ranks' positions in host order too.
  std::vector<std::vector<GuardedBuffer>> send(p), recv(p);
  std::vector<std::vector<FusedCall>> calls(p);
  for (int r = 0; r < p; ++r) {
    const auto position = static_cast<size_t>(r);
    size_t start = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      const size_t bytes = counts[i] * elemSize;
      send[r].emplace_back(callInput(r, i, start));
      std::vector<char> out(outBlocks * bytes, GuardedBuffer::kUnwritten);
      if (collective == Collective::AllGather && inPlace(i) && bytes != 0) {
        std::memcpy(out.data() + position * bytes, send[r][i].data(), bytes);
      }
      recv[r].emplace_back(out);
      start += counts[i];
    }
    for (size_t i = 0; i < counts.size(); ++i) {
      const size_t bytes = counts[i] * elemSize;
      FusedCall call{send[r][i].data(), recv[r][i].data(), counts[i]};
      if (inPlace(i) && collective == Collective::AllReduce) call.recvbuff = send[r][i].data();
      if (inPlace(i) && collective == Collective::AllGather) call.sendbuff = recv[r][i].data() + position * bytes;
      if (inPlace(i) && collective == Collective::ReduceScatter)
        call.recvbuff = send[r][i].data() + position * bytes;
      calls[r].push_back(call);
    }
  }
  const std::string what =
      fmt::format("{} ring on {} calls, p={} total={} type={} op={}{}", static_cast<int>(collective),
                  counts.size(), p, total, dataTypeName(type), redOpName(op), hostOrder ? " in host order" : "");
  MemoryWorld world(p, Delivery::Synchronous);
  try {
    world.run([&](MemoryChannel& channel) {
      CollArgs args;
      args.count = total;
      args.type = type;
      args.op = op;
      args.calls = calls[channel.rank()];
      auto ring = [&](Channel& c, std::span<const int> positions) {
        if (collective == Collective::AllReduce) return allReduceRing(args, c);
        if (collective == Collective::AllGather) return allGatherRingOrdered(args, c, positions);
        reduceScatterRingOrdered(args, c, positions);
      };
      if (!hostOrder) return ring(channel, {});
      SubChannel sub(channel, order);
      ring(sub, order);
    });
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << what << ": " << e.what();
  }
  for (int r = 0; r < p; ++r) {
    size_t start = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      auto failure = [&] {
        return ::testing::AssertionFailure() << what << ", rank " << r << ", call " << i << ": ";
      };
      if (!send[r][i].guardsIntact() || !recv[r][i].guardsIntact())
        return failure() << "wrote outside its buffers";
      const size_t bytes = counts[i] * elemSize;
      const void* result = calls[r][i].recvbuff;
      ::testing::AssertionResult ok = ::testing::AssertionSuccess();
      switch (collective) {
        case Collective::AllReduce:
          ok = matchesReduction(result, inputs, start, counts[i], type, op);
          if (ok) ok = sameBytes(result, calls[0][i].recvbuff, bytes, "result (not bit-identical to rank 0's)");
          break;
        case Collective::AllGather:
          for (int q = 0; q < p && ok; ++q) {
            ok = sameBytes(recv[r][i].data() + q * bytes, inputs[q].data() + start * elemSize, bytes, "a block");
          }
          break;
        default:
          ok = matchesReduction(result, inputs, r * total + start, counts[i], type, op);
          break;
      }
      if (ok && !inPlace(i)) {
        const std::vector<char> in = callInput(r, i, start);
        ok = sameBytes(send[r][i].data(), in.data(), in.size(), "sendbuff");
      }
      if (!ok) return failure() << ok.message();
      start += counts[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Call layouts: empty calls, one-element calls, calls larger than a block, mixed in place and apart, and
// segments (64 bytes here, then the default) spanning many calls or a piece of one.
TEST(FusedRing, CallBuffersMatchReference) {
  std::vector<std::vector<size_t>> layouts = {{5}, {1, 0, 2, 0, 0, 3}, {1000, 1, 17, 0, 4099, 64}};
  std::vector<size_t> many;
  for (size_t i = 0; i < 300; ++i) many.push_back(splitMix(i) % 40);
  layouts.push_back(many);
  const std::function<bool(size_t)> apart = [](size_t) { return false; };
  const std::function<bool(size_t)> everyThird = [](size_t i) { return i % 3 == 1; };
  const std::pair<weftDataType_t, weftRedOp_t> kinds[] = {
      {weftFloat32, weftSum}, {weftInt32, weftMax}, {weftBfloat16, weftProd}, {weftUint8, weftSum}};
  for (size_t segmentBytes : {size_t{64}, gPipelineSegmentBytes.load()}) {
    const SegmentBytes segments(segmentBytes);
    for (Collective collective : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter}) {
      for (int p = 1; p <= 5; ++p) {
        for (const auto& counts : layouts) {
          bool alternate = p % 2 == 1;  // every other case in place and in host order
          for (const auto& [type, op] : kinds) {
            if (collective == Collective::AllGather && op != weftSum) continue;  // moves bytes only
            // Tiny segments over thousands of elements: one type is enough to walk the pieces.
            if (segmentBytes == 64 && counts.size() > 6 && type != weftFloat32) continue;
            alternate = !alternate;
            EXPECT_TRUE(runRingOnCalls(collective, p, counts, type, op, alternate && p > 2,
                                       alternate ? everyThird : apart));
          }
        }
      }
    }
  }
}

// Large calls at the default segment size: many segments per call, and a vector of megabytes.
TEST(FusedRing, LargeCalls) {
  const std::function<bool(size_t)> apart = [](size_t) { return false; };
  for (Collective collective : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter}) {
    EXPECT_TRUE(runRingOnCalls(collective, 3, {300000, 1, 250000, 7}, weftFloat32, weftSum, false, apart));
    EXPECT_TRUE(runRingOnCalls(collective, 4, std::vector<size_t>(256, 1024), weftFloat32, weftSum, false, apart));
  }
}

}  // namespace
}  // namespace weft
