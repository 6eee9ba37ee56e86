#include "core/algorithms/vector_layout.h"

#include <algorithm>
#include <new>

#include "core/algorithms/partition.h"
#include "core/reduce/reduce.h"
#include "plugins/common/copy_bytes.h"

namespace weft {
namespace {

// The storage of layouts that are gone, per thread: a group run again (a plan's launch, a training step's
// fused gradients) must allocate nothing, and a layout over a thousand calls needs their starts and a piece
// per call a message spans. A stack, as one algorithm's layout may be alive while another's is made.
struct LayoutStorage {
  std::vector<size_t> starts;
  std::vector<BufferPiece> pieces;
};
thread_local std::vector<LayoutStorage> tSpareStorage;

}  // namespace

VectorLayout::VectorLayout(const CollArgs& args, bool blockedInput, bool blockedOutput)
    : args_(args), elemSize_(dataTypeSize(args.type)), blocked_{blockedInput, blockedOutput} {
  if (args.calls.empty()) return;
  if (!tSpareStorage.empty()) {
    LayoutStorage& spare = tSpareStorage.back();
    starts_ = std::move(spare.starts);
    pieces_ = std::move(spare.pieces);
    tSpareStorage.pop_back();
  }
  starts_.clear();
  starts_.reserve(args.calls.size());
  size_t start = 0;
  for (const FusedCall& call : args.calls) {
    starts_.push_back(start);
    start += call.count;
  }
}

VectorLayout::~VectorLayout() {
  if (starts_.capacity() == 0 && pieces_.capacity() == 0) return;
  pieces_.clear();
  try {
    tSpareStorage.push_back({std::move(starts_), std::move(pieces_)});
  } catch (const std::bad_alloc&) {
    // Nothing kept: the next layout allocates its own.
  }
}

char* VectorLayout::address(Side side, size_t block, size_t offset) const {
  const void* base = side == Side::Input ? args_.sendbuff : args_.recvbuff;
  const size_t first = blocked_[static_cast<int>(side)] ? block * args_.count : 0;
  return const_cast<char*>(elementAt(base, first + offset, elemSize_));
}

char* VectorLayout::address(const FusedCall& call, Side side, size_t block, size_t offset) const {
  const void* base = side == Side::Input ? call.sendbuff : call.recvbuff;
  const size_t first = blocked_[static_cast<int>(side)] ? block * call.count : 0;
  return const_cast<char*>(elementAt(base, first + offset, elemSize_));
}

template <typename F>
void VectorLayout::forEachPart(size_t offset, size_t count, F f) const {
  const size_t end = offset + count;
  // The call holding element `offset`: the last one starting at or before it.
  auto first = std::upper_bound(starts_.begin(), starts_.end(), offset);
  for (auto call = static_cast<size_t>(first - starts_.begin()) - 1; call < starts_.size(); ++call) {
    const size_t start = starts_[call];
    if (start >= end) break;
    const size_t begin = std::max(offset, start);
    const size_t stop = std::min(end, start + args_.calls[call].count);
    if (begin < stop) f(args_.calls[call], begin - start, begin - offset, stop - begin);
  }
}

std::span<const BufferPiece> VectorLayout::piecesOf(Side side, size_t block, size_t offset, size_t count) {
  pieces_.clear();
  forEachPart(offset, count, [&](const FusedCall& call, size_t at, size_t, size_t n) {
    pieces_.push_back({address(call, side, block, at), n * elemSize_});
  });
  return pieces_;
}

void VectorLayout::send(SendQueue& sends, int peer, Side side, size_t block, size_t offset, size_t count) {
  if (args_.calls.empty()) return sends.post(peer, address(side, block, offset), count * elemSize_);
  sends.post(peer, piecesOf(side, block, offset, count), count * elemSize_);
}

void VectorLayout::receive(PendingRecv& recv, Channel& channel, int peer, size_t block, size_t offset,
                           size_t count) {
  if (args_.calls.empty()) {
    return recv.post(channel, peer, address(Side::Output, block, offset), count * elemSize_);
  }
  recv.post(channel, peer, piecesOf(Side::Output, block, offset, count), count * elemSize_);
}

void VectorLayout::reduceWith(size_t inputBlock, size_t offset, size_t count, void* partial, bool toOutput) const {
  if (args_.calls.empty()) {
    void* to = toOutput ? address(Side::Output, 0, offset) : partial;
    return reduce(to, address(Side::Input, inputBlock, offset), partial, count, args_.type, args_.op);
  }
  forEachPart(offset, count, [&](const FusedCall& call, size_t at, size_t within, size_t n) {
    char* received = elementAt(partial, within, elemSize_);
    void* to = toOutput ? address(call, Side::Output, 0, at) : received;
    reduce(to, address(call, Side::Input, inputBlock, at), received, n, args_.type, args_.op);
  });
}

void VectorLayout::copy(size_t inputBlock, size_t outputBlock) const {
  auto copyPart = [&](const char* from, char* to, size_t count) {
    if (from != to && count != 0) copyBytes(to, from, count * elemSize_);
  };
  if (args_.calls.empty()) {
    return copyPart(address(Side::Input, inputBlock, 0), address(Side::Output, outputBlock, 0), args_.count);
  }
  for (const FusedCall& call : args_.calls) {
    copyPart(address(call, Side::Input, inputBlock, 0), address(call, Side::Output, outputBlock, 0), call.count);
  }
}

}  // namespace weft
