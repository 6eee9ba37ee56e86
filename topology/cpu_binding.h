// Binding Weft's long-lived threads (stream workers) near the cores of their rank. A launcher that binds each
// rank (mpirun --bind-to core/socket/numa, taskset) means "run here"; a progress thread pinned to the same
// core would fight the rank for it, while one left anywhere would touch the rank's memory from another NUMA
// node. The middle way: the NUMA node(s) holding the rank's CPUs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::topology {

// Called at the start of a long-lived thread. When the process is bound to fewer CPUs than it may use,
// binds the calling thread to every CPU of the NUMA node(s) that hold the process's bound CPUs; when the
// process is unbound (mpirun --bind-to none) the thread keeps the mask it inherited. Never fails: problems
// are logged at debug level and the thread runs unbound. `threadName` is for the log.
void bindThisThreadNearProcess(const char* threadName);

// The CPUs the calling thread may run on (its affinity mask; the online CPUs when that cannot be read); 0 when
// neither can be known.
size_t usableCores();

// The same CPUs as a mask of 64-bit words (CPU i is bit i % 64 of word i / 64), trailing zero words left
// out; empty when the affinity cannot be read. Ranks of a host exchange these at communicator creation
// to tell whether they outnumber the CPUs they may run on between them (cpusCovered).
std::vector<uint64_t> usableCpuMask();

// How many distinct CPUs the masks cover together; 0 when one of them is empty (not known).
size_t cpusCovered(const std::vector<const std::vector<uint64_t>*>& masks);

}  // namespace weft::topology
