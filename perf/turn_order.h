// The order in which the libraries (the timing loop's sides) take their turns within one round.
//
// A side's time depends on which side ran just before it, for far longer than the one untimed call each turn
// starts with: Weft's in-place AllGather of 32 MiB at 2 ranks ran 0.79-0.85x Open MPI's when its turn always
// came right after Open MPI's out-of-place one, and 1.10-1.25x when it came right after Open MPI's in-place
// one (three alternating launches each, 2-vCPU Xeon, 2026-12-02, perf/README.md "Who runs after whom").
// Rotating one fixed order only changes who goes first: every side keeps the same predecessor. So the rounds
// follow a Williams design (a balanced Latin square): over a cycle of n rounds (2n when n is odd), every side
// goes first equally often and follows every other side equally often within a round (the first turn of a
// round also comes after the last turn of the round before, a pair the design does not balance).
#pragma once

#include <cstddef>
#include <vector>

namespace commperf {

// Rounds in one cycle of the design: n for an even number of sides, 2n for an odd one.
size_t turnOrderCycle(size_t sides);

// The sides (0 .. sides-1), in the order they take their turns in round `round` (any round: the cycle repeats).
std::vector<size_t> turnOrder(size_t sides, size_t round);

}  // namespace commperf
