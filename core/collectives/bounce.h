// AllReduces, Reduces and (with more ranks than CPUs) Broadcasts on a backend that maps host memory (the shm
// node backend) run in pieces bounced through a lane buffer of that memory when the caller's buffers are not
// host memory, and (with more ranks than CPUs) AllGathers from a copy of their input there: see bounce.cpp.
#pragma once

#include "core/algorithms/algorithms.h"
#include "core/collectives/op.h"

namespace weft {

class Backend;

// Runs op (args: its arguments with weftAvg as weftSum) on `backend` through host memory, when it is an
// AllReduce, a Reduce or (where the host's ranks outnumber its CPUs) a Broadcast or AllGather of
// kBounceFromBytes or more and the backend prefers host memory for it (Backend::prefersHostMemory), and returns
// true; false, having run nothing, otherwise (or when the backend declines the first piece). Whether a collective
// goes in pieces depends only on what every rank has alike (the size, the plugins, the host's CPUs), so every rank
// runs the same pieces; an AllGather, which goes whole, is copied or not by each rank for its own input.
bool runBouncedOnBackend(Backend& backend, const Op& op, const CollArgs& args);

}  // namespace weft
