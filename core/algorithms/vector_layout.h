// Where the elements of a collective's vectors lie: in the call's input and output buffers, or spread over
// the buffers of a fused operation's calls (CollArgs::calls), which an algorithm then sends, receives and
// reduces in place as vectored messages (Channel::isendv/irecvv) instead of packing them into one vector
// and back: two copies of the whole vector saved. The rings (AllReduce, AllGather, ReduceScatter) run on it.
//
// A side (input or output) is either one vector of `count` elements or, blocked, p blocks of `count`
// (AllGather's output, ReduceScatter's input); element e of block b is then at b * count + e of the buffer.
// For calls, `count` is their total and each call's blocks are its own: element e of block b of the fused
// vector lies in the call i holding e (calls' elements one after another), at b * c_i + (e - o_i) of its
// buffer (c_i its count, o_i the total of the calls before it): the layouts of fusion/fused_run.h.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/pipeline.h"

namespace weft {

enum class Side { Input, Output };

class VectorLayout {
 public:
  VectorLayout(const CollArgs& args, bool blockedInput, bool blockedOutput);
  ~VectorLayout();
  VectorLayout(const VectorLayout&) = delete;
  VectorLayout& operator=(const VectorLayout&) = delete;

  // Sends elements [offset, offset + count) of block `block` (0 for an unblocked side) of one side.
  void send(SendQueue& sends, int peer, Side side, size_t block, size_t offset, size_t count);
  // Receives elements [offset, offset + count) of block `block` of the output.
  void receive(PendingRecv& recv, Channel& channel, int peer, size_t block, size_t offset, size_t count);
  // Reduces elements [offset, offset + count) of the input's block `inputBlock` with `partial` (count
  // elements, input first): into the output (unblocked) or, !toOutput, into `partial` itself.
  void reduceWith(size_t inputBlock, size_t offset, size_t count, void* partial, bool toOutput) const;
  // Copies the input's block `inputBlock` to the output's block `outputBlock`, all `args.count` elements,
  // where they are not the same memory already (in place).
  void copy(size_t inputBlock, size_t outputBlock) const;

 private:
  // Element `offset` of block `block` of one side of the call's buffers.
  char* address(Side side, size_t block, size_t offset) const;
  char* address(const FusedCall& call, Side side, size_t block, size_t offset) const;
  // Calls f(call, first element within the call, first element within the range, elements) for each part
  // of [offset, offset + count) (args.calls set).
  template <typename F>
  void forEachPart(size_t offset, size_t count, F f) const;
  // The pieces of [offset, offset + count) of one side's block, in pieces_.
  std::span<const BufferPiece> piecesOf(Side side, size_t block, size_t offset, size_t count);

  const CollArgs& args_;
  const size_t elemSize_;
  const bool blocked_[2];  // per Side
  // Storage kept by the thread from one layout to the next (vector_layout.cpp), so that a fused group run
  // again allocates nothing:
  std::vector<size_t> starts_;       // calls: the first element of each in the vector
  std::vector<BufferPiece> pieces_;  // the last message's pieces (a Channel copies what it keeps)
};

}  // namespace weft
