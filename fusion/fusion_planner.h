// Which operations of a group run as one collective.
//
// Operations fuse when they share collective (AllReduce, AllGather or ReduceScatter), communicator,
// datatype, reduce op, stream and fusion id (0: never), as the communicator's setting for that
// collective allows:
//   Off    one collective per call;
//   Auto   / Size: a bucket takes compatible operations until the next would take it past the threshold
//          (64 MiB for Auto); an operation larger than the threshold goes alone;
//   Id     every compatible operation with the same fusion id joins one bucket;
//   Index  (AllReduce) the split indices cut the group's AllReduces on a communicator, counted from 0, into
//          segments; each segment's compatible operations make one bucket.
// Bytes counted are one rank's input: count (AllReduce), sendcount (AllGather), nranks * recvcount
// (ReduceScatter) elements.
//
// A fused collective runs where its first operation was issued. So that fusion never changes what a group
// computes, an operation does not join a bucket when it reads or writes memory that an operation issued
// since the bucket opened writes (or writes memory it reads), nor when it reads or writes what the
// bucket's members write: it opens a new bucket instead. Every rank must therefore issue groups with the
// same buffer dependencies, as any SPMD program does.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "core/collectives/op.h"
#include "fusion/fusion_config.h"

struct weftStream;

namespace weft {

struct HeldOp {
  Op op;
  weftStream* stream;
};

// The setting of a communicator for a fusable collective (slot: fusionSlot()).
using FusionSettingOf = std::function<FusionSetting(const weftComm*, size_t slot)>;

// Groups of indices into `held`, in launch order, together covering every index once. A group of one
// runs as issued; a larger one as one fused collective.
std::vector<std::vector<size_t>> planFusion(std::span<const HeldOp> held, const FusionSettingOf& settingOf);

// Applies planFusion: the operations to launch, fused ones carrying their members.
std::vector<HeldOp> fuseGroup(std::span<const HeldOp> held, const FusionSettingOf& settingOf);

// One rank's input bytes of an operation, as buckets count them.
size_t fusionBytes(const Op& op);

}  // namespace weft
