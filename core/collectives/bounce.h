// AllReduces, Reduces and (with more ranks than CPUs) Broadcasts on a backend that maps host memory (the shm
// node backend) run in pieces bounced through a lane buffer of that memory when the caller's buffers are not
// host memory, and (with more ranks than CPUs) AllGathers from a copy of their input there: see bounce.cpp.
#pragma once

#include "core/algorithms/algorithms.h"
#include "core/collectives/op.h"

namespace weft {

class Backend;

// Runs op (args: its arguments with weftAvg as weftSum) on `backend` in pieces through host memory, when it
// is an AllReduce, a Reduce or (where the host's ranks outnumber its CPUs) a Broadcast or AllGather of
// kBounceFromBytes or more and the backend maps host memory, and returns true;
// false, having run nothing, otherwise (or when the backend declines the first piece). The decision depends only
// on what every rank has alike (the size and the plugins), so every rank runs the same pieces.
bool runBouncedOnBackend(Backend& backend, const Op& op, const CollArgs& args);

}  // namespace weft
