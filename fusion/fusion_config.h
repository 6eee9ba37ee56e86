// How each fusable collective of a communicator is fused: from WEFT_FUSION / WEFT_FUSION_INDEX when the
// communicator is made, overridden per collective by weftCommSetFusion.
#pragma once

#include <array>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft {

// weftFusionAuto's threshold, as in Horovod and MindSpore.
inline constexpr size_t kAutoFusionBytes = size_t{64} << 20;

struct FusionSetting {
  weftFusionMode_t mode = weftFusionAuto;
  size_t thresholdBytes = kAutoFusionBytes;  // Auto and Size: a bucket never grows past this
  std::vector<int> splitIndices;             // Index: ascending op indices that start a new bucket
};

// The collectives that fuse, in the order of FusionSettings' slots; nullopt for any other value (coll is
// a caller's weftCollType_t, read as an int: see core/common/enum_value.h).
std::optional<size_t> fusionSlot(int coll);
const char* fusionCollName(size_t slot);

// Checks a caller's config for `coll` and copies it (the caller may free its index list).
// Throws weftInvalidArgument saying what is wrong.
FusionSetting settingFromConfig(weftCollType_t coll, const weftFusionConfig_t& config);

// Parses WEFT_FUSION ("allreduce:size:32;allgather:auto;reducescatter:off", sizes in MB) and
// WEFT_FUSION_INDEX ("20,35": AllReduce in index mode). Throws weftInvalidArgument naming the variable.
std::array<FusionSetting, 3> parseFusionEnvironment(const std::string& fusion, const std::string& index);

// A communicator's settings: the environment's, unless weftCommSetFusion said otherwise. Guarded, since
// a stream's thread fuses while the application may change them.
class FusionSettings {
 public:
  // Reads the environment: a bad value throws here, when the communicator is made.
  FusionSettings();
  void set(size_t slot, std::optional<FusionSetting> setting);  // nullopt: back to the environment's
  FusionSetting get(size_t slot) const;

 private:
  mutable std::mutex mutex_;
  std::array<FusionSetting, 3> environment_;
  std::array<std::optional<FusionSetting>, 3> explicit_;
};

}  // namespace weft
