// --choices FILE: how good the tuner's choices are on this machine. For AllReduce, ReduceScatter and
// AllGather (the collectives with more than one flat algorithm), a communicator left to the tuner and one
// per algorithm forced (forced_comm.h) take turns round by round over the sweep's sizes (-b, -e, -f), float
// sum, out of place; each size's median per communicator goes to the table and to FILE as JSON, with the
// best forced algorithm and the tuner's time over it. Timing them in one launch, taking turns, matters on
// a machine with more ranks than cores: separate launches differ by up to +-50 % on their own there.
//
// Which algorithm the tuner took is in its log (WEFT_LOG_LEVEL=info); perf/tuning/check_choices.py reads
// both and compares the chosen algorithm's forced time with the best.
#pragma once

#include "options.h"
#include "weft/weft.h"

namespace commperf {

// Collective over MPI_COMM_WORLD; rank 0 prints the table and writes `options.choicesPath`. Returns false
// (rank 0 printing why) when the file cannot be written.
bool checkChoices(weftComm_t world, int rank, int nranks, const Options& options);

}  // namespace commperf
