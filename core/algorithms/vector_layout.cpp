#include "core/algorithms/vector_layout.h"

#include <algorithm>

#include "core/algorithms/partition.h"
#include "core/reduce/reduce.h"

namespace weft {

VectorLayout::VectorLayout(const CollArgs& args) : args_(args), elemSize_(dataTypeSize(args.type)) {
  starts_.reserve(args.calls.size());
  size_t start = 0;
  for (const FusedCall& call : args.calls) {
    starts_.push_back(start);
    start += call.count;
  }
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

std::span<const BufferPiece> VectorLayout::piecesOf(bool output, size_t offset, size_t count) {
  pieces_.clear();
  forEachPart(offset, count, [&](const FusedCall& call, size_t at, size_t, size_t n) {
    const void* base = output ? call.recvbuff : call.sendbuff;
    pieces_.push_back({const_cast<char*>(elementAt(base, at, elemSize_)), n * elemSize_});
  });
  return pieces_;
}

void VectorLayout::send(SendQueue& sends, int peer, bool output, size_t offset, size_t count) {
  if (args_.calls.empty()) {
    const void* base = output ? args_.recvbuff : args_.sendbuff;
    return sends.post(peer, elementAt(base, offset, elemSize_), count * elemSize_);
  }
  sends.post(peer, piecesOf(output, offset, count), count * elemSize_);
}

void VectorLayout::receive(PendingRecv& recv, Channel& channel, int peer, size_t offset, size_t count) {
  if (args_.calls.empty()) {
    return recv.post(channel, peer, elementAt(args_.recvbuff, offset, elemSize_), count * elemSize_);
  }
  recv.post(channel, peer, piecesOf(true, offset, count), count * elemSize_);
}

void VectorLayout::reduceInto(size_t offset, size_t count, const void* received) const {
  if (args_.calls.empty()) {
    return reduce(elementAt(args_.recvbuff, offset, elemSize_), elementAt(args_.sendbuff, offset, elemSize_),
                  received, count, args_.type, args_.op);
  }
  forEachPart(offset, count, [&](const FusedCall& call, size_t at, size_t within, size_t n) {
    reduce(elementAt(call.recvbuff, at, elemSize_), elementAt(call.sendbuff, at, elemSize_),
           elementAt(received, within, elemSize_), n, args_.type, args_.op);
  });
}

}  // namespace weft
