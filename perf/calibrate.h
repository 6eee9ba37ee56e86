// --calibrate FILE: measures the tuner's cost-model parameters on this machine and writes the tuning file
// WEFT_TUNING_FILE loads (docs/tuning.md).
//
// For every collective, one communicator per flat algorithm is split off with WEFT_ALGO forcing it, and
// at each of kCalibrationSizes (n bytes per rank; for AllGather, ReduceScatter and AllToAll the buffer
// size / nranks) the algorithms take turns round by round in the sweep's timing loop (warm-up, rounds;
// Bench::runOnComms). The median round is kept: with more ranks than cores the waits between steps are
// part of an algorithm's cost, not noise, and the fastest round (kept before 2026-11-23) favoured the
// algorithms whose rounds vary most (3 ranks on 2 cores: Rabenseifner's fastest 8 B round beat recursive
// doubling's, its median took 2.7 times as long). Taking turns puts a burst of noise on every algorithm. The file
// records those times with the rank count; Weft takes each band between two sizes as a line and divides it by the
// algorithm's step and wire factors at that count to get the band's alpha and beta (cost_model.h).
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
