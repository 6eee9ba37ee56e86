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
// A fused collective runs where its first operation was issued (or earlier: a bucket that nothing can
// join any more may go before the group ends, see FusionPlanner::takeReady). So that fusion never changes what a
// group computes, an operation does not join a bucket when it reads or writes memory that an operation issued
// since the bucket opened writes (or writes memory it reads), nor when it reads or writes what the
// bucket's members write: it opens a new bucket instead. Every rank must therefore issue groups with the
// same buffer dependencies, as any SPMD program does.
#pragma once

#include <functional>
#include <memory>
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

// Plans a group call by call, so that a bucket can go as soon as it is full (Auto, Size), its index
// segment has passed (Index), or a dependency closed it, while the application still issues the rest of
// the group. Launches are given as indices of the calls added, in launch order; a launch of one call runs
// it as issued, a larger one as one fused collective.
class FusionPlanner {
 public:
  explicit FusionPlanner(FusionSettingOf settingOf);
  ~FusionPlanner();
  FusionPlanner(const FusionPlanner&) = delete;
  FusionPlanner& operator=(const FusionPlanner&) = delete;

  // The group's next call.
  void add(const HeldOp& call);
  // The buckets at the head of the plan that nothing can join any more, up to the first launch that may
  // still grow or is not a bucket (Send/Recv start together at the group's end; so, for simplicity, do
  // calls that do not fuse): they may run now. Each launch is the indices of its calls; the span is valid
  // until the next add() or reset().
  std::span<const std::vector<size_t>> takeReady();
  // Every launch not taken yet (the group's end); valid as takeReady's.
  std::span<const std::vector<size_t>> takeAll();
  // The operation that runs a launch: the call itself, or a fused operation carrying its members.
  HeldOp launchOf(std::span<const size_t> members);
  // Forgets the group, keeping the memory for the next one.
  void reset();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The whole plan of a group at once (what FusionPlanner::takeAll gives after every call).
std::vector<std::vector<size_t>> planFusion(std::span<const HeldOp> held, const FusionSettingOf& settingOf);

// One rank's input bytes of an operation, as buckets count them.
size_t fusionBytes(const Op& op);

}  // namespace weft
