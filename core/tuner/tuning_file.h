// WEFT_TUNING_FILE: the JSON file `commperf --calibrate FILE` writes (docs/tuning.md):
//   {"weft_tuning_version": 1, "nranks": 4, "transport": "tcp",
//    "entries": [{"transport": "tcp", "collective": "allreduce", "algorithm": "ring", "nranks": 4,
//                 "bytes": [8, 1024, 65536, 4194304], "times_us": [67, 70, 160, 7040]}, ...],
//    "settings": {"WEFT_SHM_REDUCE_ALL_BYTES": "16384"}}
// An entry is a measurement: the median time at each size (n: one rank's contribution, ascending, at least
// two) at nranks; it replaces the model's default measurement of that (transport, collective, algorithm)
// at that rank count (CostModel::addMeasurement).
// Settings are WEFT_* values below the environment and above the defaults (weft-info shows them as
// "tuning file").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/tuner/cost_model.h"

namespace weft {

struct TuningEntry {
  std::string transport;
  Collective collective;
  Algorithm algorithm;
  int nranks;
  std::vector<double> bytes;
  std::vector<double> timesUs;
};

struct TuningFile {
  std::vector<TuningEntry> entries;
  std::map<std::string, std::string> settings;
};

// Throws weftInvalidArgument naming the file and what is wrong in it.
TuningFile readTuningFile(const std::string& path);
// The same for the file's text (readTuningFile reads the file and calls it; tests/fuzz feeds it directly);
// `path` only names the file in messages.
TuningFile parseTuningFile(const std::string& text, const std::string& path);

}  // namespace weft
