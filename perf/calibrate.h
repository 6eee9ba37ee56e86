// --calibrate FILE: measures the tuner's cost-model parameters on this machine and writes the tuning file
// WEFT_TUNING_FILE loads (docs/tuning.md).
//
// For every collective and each of its flat algorithms, a communicator split off with WEFT_ALGO forcing
// that algorithm runs the sweep's timing loop (warm-up, rounds, medians) at kCalibrationSizes; a straight
// line time = latency + n * ns_per_byte is fitted to the medians by least squares on relative error (so
// that 8-byte and 4-MiB points weigh alike), n being one rank's contribution (for AllGather, ReduceScatter
// and AllToAll: the buffer size / nranks). The file records the fit with the rank count it was measured
// at; Weft divides it by the algorithm's step and wire factors at that count to get alpha and beta.
//
// The transport is the one WEFT_PLUGINS names when it names one transport; otherwise "shm" (what ranks on
// one host use by default). Options --calibrate-transport NAME overrides it.
#pragma once

#include <string>

#include "options.h"
#include "weft/weft.h"

namespace commperf {

// Collective over MPI_COMM_WORLD; rank 0 writes `path`. Returns false (rank 0 printing why) when the file
// cannot be written.
bool calibrate(weftComm_t world, int rank, int nranks, const Options& options);

}  // namespace commperf
