// weft-info --model: the tuner's cost model projected over rank counts (docs/scaling.md).
#pragma once

#include <cstddef>
#include <string>

#include "core/tuner/algorithm_names.h"

namespace weft::info {

// Predicted microseconds of every algorithm of `c` for `bytes` per rank, at 2, 4, ... `maxRanks` ranks
// placed `ranksPerHost` to a host (`intra` transport inside hosts, `inter` between them), and the tuner's
// choice; a table.
std::string modelProjection(Collective c, size_t bytes, int ranksPerHost, int maxRanks, const std::string& intra,
                            const std::string& inter);

}  // namespace weft::info
