// --calibrate FILE: measures the tuner's cost-model parameters on this machine and writes the tuning file
// WEFT_TUNING_FILE loads (docs/tuning.md).
//
// For every collective and each of its flat algorithms, a communicator split off with WEFT_ALGO forcing
// that algorithm runs the sweep's timing loop (warm-up, rounds) at kCalibrationSizes, n bytes per rank
// (for AllGather, ReduceScatter and AllToAll: the buffer size / nranks), and keeps the fastest round's
// time (on a shared machine noise only adds). The file records those times with the rank count; Weft
// takes each band between two sizes as a line and divides it by the algorithm's step and wire factors at
// that count to get the band's alpha and beta (cost_model.h).
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
