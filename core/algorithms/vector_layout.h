// Where the elements of a collective's vector lie: in the call's input and output buffers, or spread over
// the buffers of a fused operation's calls (CollArgs::calls), which an algorithm then sends, receives and
// reduces in place as vectored messages (Channel::isendv/irecvv) instead of packing them into one vector
// and back: two copies of the whole vector saved. The ring AllReduce runs on it.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/pipeline.h"

namespace weft {

class VectorLayout {
 public:
  explicit VectorLayout(const CollArgs& args);

  // Sends elements [offset, offset + count) of the input, or of the output (`output`).
  void send(SendQueue& sends, int peer, bool output, size_t offset, size_t count);
  // Receives elements [offset, offset + count) of the output.
  void receive(PendingRecv& recv, Channel& channel, int peer, size_t offset, size_t count);
  // output = input op received over elements [offset, offset + count); `received` holds count elements.
  void reduceInto(size_t offset, size_t count, const void* received) const;

 private:
  // Calls f(call, first element within the call, first element within the range, elements) for each part
  // of [offset, offset + count) (args.calls set).
  template <typename F>
  void forEachPart(size_t offset, size_t count, F f) const;
  // The pieces of [offset, offset + count) of the input or output, in pieces_.
  std::span<const BufferPiece> piecesOf(bool output, size_t offset, size_t count);

  const CollArgs& args_;
  const size_t elemSize_;
  std::vector<size_t> starts_;       // calls: the first element of each in the vector
  std::vector<BufferPiece> pieces_;  // the last message's pieces (a Channel copies what it keeps)
};

}  // namespace weft
