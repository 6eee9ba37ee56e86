#include "fusion/fused_run.h"

#include <cstring>
#include <vector>

#include "core/comm/comm.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {

// The communicator's fusion buffer `which` with at least `bytes`, kept for later fused collectives.
unsigned char* fusionBuffer(weftComm& comm, int which, size_t bytes) {
  std::vector<unsigned char>& buffer = comm.fusionBuffers[which];
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

// Where consecutive members' buffers already lie end to end: the start of the first, else null.
template <typename BufferOf>
const unsigned char* contiguousStart(const std::vector<Op>& members, size_t elemSize, BufferOf bufferOf) {
  const auto* start = static_cast<const unsigned char*>(bufferOf(members.front()));
  const unsigned char* next = start;
  for (const Op& m : members) {
    if (bufferOf(m) != next || next == nullptr) return nullptr;
    next += m.args.count * elemSize;
  }
  return start;
}

void copyBytes(void* to, const void* from, size_t bytes) {
  if (bytes > 0 && to != from) std::memcpy(to, from, bytes);
}

}  // namespace

void runFused(const Op& op) {
  weftComm& comm = *op.comm;
  const std::vector<Op>& members = *op.members;
  const size_t elem = dataTypeSize(op.args.type);
  const size_t total = op.args.count * elem;  // C, in bytes
  const auto ranks = static_cast<size_t>(comm.nranks);
  const size_t inBytes = op.kind == OpKind::ReduceScatter ? total * ranks : total;
  const size_t outBytes = op.kind == OpKind::AllGather ? total * ranks : total;

  // Inputs: AllReduce and AllGather members lying end to end are used where they are.
  const unsigned char* in = nullptr;
  if (op.kind != OpKind::ReduceScatter)
    in = contiguousStart(members, elem, [](const Op& m) { return m.args.sendbuff; });
  if (in == nullptr) {
    unsigned char* packed = fusionBuffer(comm, 0, inBytes);
    size_t offset = 0;
    for (const Op& m : members) {
      const size_t bytes = m.args.count * elem;
      const auto* from = static_cast<const unsigned char*>(m.args.sendbuff);
      if (op.kind == OpKind::ReduceScatter) {
        for (size_t r = 0; r < ranks; ++r) copyBytes(packed + r * total + offset, from + r * bytes, bytes);
      } else {
        copyBytes(packed + offset, from, bytes);
      }
      offset += bytes;
    }
    in = packed;
  }

  // Outputs: AllReduce and ReduceScatter members lying end to end receive in place, unless that range
  // partly overlaps the input (a collective's buffers are either the same or apart).
  unsigned char* out = nullptr;
  if (op.kind != OpKind::AllGather) {
    auto* start =
        const_cast<unsigned char*>(contiguousStart(members, elem, [](const Op& m) { return m.args.recvbuff; }));
    const bool apart = start == nullptr || start + outBytes <= in || in + inBytes <= start;
    if (start != nullptr && (start == in || apart)) out = start;
  }
  const bool unpack = out == nullptr;
  if (unpack) {
    // A packed AllReduce input is reduced in place; the other collectives' outputs have other shapes.
    const bool packedInput = in == comm.fusionBuffers[0].data();
    out = op.kind == OpKind::AllReduce && packedInput ? comm.fusionBuffers[0].data()
                                                      : fusionBuffer(comm, 1, outBytes);
  }

  Op whole = op;
  whole.members.reset();
  whole.args.sendbuff = in;
  whole.args.recvbuff = out;
  runCollective(whole);

  if (!unpack) return;
  size_t offset = 0;
  for (const Op& m : members) {
    const size_t bytes = m.args.count * elem;
    auto* to = static_cast<unsigned char*>(m.args.recvbuff);
    if (op.kind == OpKind::AllGather) {
      for (size_t r = 0; r < ranks; ++r) copyBytes(to + r * bytes, out + r * total + offset, bytes);
    } else {
      copyBytes(to, out + offset, bytes);
    }
    offset += bytes;
  }
}

}  // namespace weft
