#include "fusion/fusion_config.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/common/config.h"
#include "core/common/enum_value.h"
#include "core/common/error.h"

namespace weft {
namespace {

constexpr const char* kCollNames[] = {"allreduce", "allgather", "reducescatter"};
constexpr weftCollType_t kColls[] = {weftCollAllReduce, weftCollAllGather, weftCollReduceScatter};

std::vector<std::string> splitAt(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  return parts;
}

void requireAscending(const std::vector<int>& indices, const char* where) {
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0) fail(weftInvalidArgument, "{}: index {} is negative", where, indices[i]);
    if (i > 0 && indices[i] <= indices[i - 1]) {
      fail(weftInvalidArgument, "{}: indices must be ascending ({} follows {})", where, indices[i],
           indices[i - 1]);
    }
  }
}

// "32" or "0.5": megabytes (MiB), as Horovod's and MindSpore's users write them.
size_t parseMegabytes(const std::string& text, const std::string& entry) {
  errno = 0;
  char* end = nullptr;
  double megabytes = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !std::isfinite(megabytes) || megabytes <= 0 ||
      megabytes > 1e9) {
    fail(weftInvalidArgument, "WEFT_FUSION entry '{}': the size must be a positive number of MB", entry);
  }
  // Under a byte (say 1e-9) would be a size threshold of 0, which the API refuses too (found by tests/fuzz).
  const auto bytes = static_cast<size_t>(megabytes * (1 << 20));
  if (bytes == 0) fail(weftInvalidArgument, "WEFT_FUSION entry '{}': the size is less than a byte", entry);
  return bytes;
}

std::vector<int> parseIndexList(const std::string& text) {
  std::vector<int> indices;
  for (const std::string& item : splitAt(text, ',')) {
    errno = 0;
    char* end = nullptr;
    long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || errno != 0 || *end != '\0' || value < 0 || value > 1 << 30) {
      fail(weftInvalidArgument, "WEFT_FUSION_INDEX='{}': '{}' is not an op index", text, item);
    }
    indices.push_back(static_cast<int>(value));
  }
  requireAscending(indices, "WEFT_FUSION_INDEX");
  return indices;
}

}  // namespace

std::optional<size_t> fusionSlot(int coll) {
  for (size_t slot = 0; slot < 3; ++slot) {
    if (kColls[slot] == coll) return slot;
  }
  return std::nullopt;
}

const char* fusionCollName(size_t slot) { return slot < 3 ? kCollNames[slot] : "?"; }

FusionSetting settingFromConfig(weftCollType_t coll, const weftFusionConfig_t& config) {
  if (config.magic != WEFT_FUSION_CONFIG_MAGIC) {
    fail(weftInvalidArgument,
         "config: magic 0x{:08x} is not a weftFusionConfig_t's (initialize it with "
         "WEFT_FUSION_CONFIG_INITIALIZER)",
         config.magic);
  }
  if (config.size < sizeof(weftFusionConfig_t) || config.version < 1) {
    fail(weftInvalidArgument, "config: size {} / version {} is not a weftFusionConfig_t of version 1 or later",
         config.size, config.version);
  }
  FusionSetting setting;
  const int mode = enumValue(config.mode);
  switch (mode) {
    case weftFusionOff:
    case weftFusionAuto:
    case weftFusionId:
      break;
    case weftFusionSize:
      if (config.thresholdBytes == 0) fail(weftInvalidArgument, "config: weftFusionSize needs thresholdBytes > 0");
      setting.thresholdBytes = config.thresholdBytes;
      break;
    case weftFusionIndex:
      if (coll != weftCollAllReduce) {
        fail(weftInvalidArgument, "config: weftFusionIndex applies to AllReduce only, not to {}",
             fusionCollName(fusionSlot(coll).value_or(3)));
      }
      if (config.numSplitIndices < 0 || (config.numSplitIndices > 0 && config.splitIndices == nullptr)) {
        fail(weftInvalidArgument, "config: {} split indices at {}", config.numSplitIndices,
             static_cast<const void*>(config.splitIndices));
      }
      setting.splitIndices.assign(config.splitIndices, config.splitIndices + config.numSplitIndices);
      requireAscending(setting.splitIndices, "config.splitIndices");
      break;
    default:
      fail(weftInvalidArgument, "config: unknown fusion mode {}", mode);
  }
  setting.mode = config.mode;
  return setting;
}

std::array<FusionSetting, 3> parseFusionEnvironment(const std::string& fusion, const std::string& index) {
  std::array<FusionSetting, 3> settings;
  std::array<bool, 3> named{};
  for (const std::string& entry : splitAt(fusion, ';')) {
    if (entry.empty()) continue;
    std::vector<std::string> fields = splitAt(entry, ':');
    std::optional<size_t> slot;
    for (size_t s = 0; s < 3; ++s) {
      if (!fields.empty() && fields[0] == kCollNames[s]) slot = s;
    }
    if (!slot || fields.size() < 2) {
      fail(weftInvalidArgument, "WEFT_FUSION entry '{}' is not <allreduce|allgather|reducescatter>:<mode>[:MB]",
           entry);
    }
    FusionSetting& setting = settings[*slot];
    const std::string& mode = fields[1];
    size_t expectedFields = 2;
    if (mode == "off") {
      setting.mode = weftFusionOff;
    } else if (mode == "auto") {
      setting.mode = weftFusionAuto;
    } else if (mode == "id") {
      setting.mode = weftFusionId;
    } else if (mode == "size") {
      expectedFields = 3;
      setting.mode = weftFusionSize;
      setting.thresholdBytes = parseMegabytes(fields.size() > 2 ? fields[2] : "", entry);
    } else if (mode == "index" && *slot == 0) {
      setting.mode = weftFusionIndex;
      if (index.empty()) fail(weftInvalidArgument, "WEFT_FUSION entry '{}' needs WEFT_FUSION_INDEX", entry);
    } else {
      fail(weftInvalidArgument, "WEFT_FUSION entry '{}': mode '{}' is not off, auto, size, id{}", entry, mode,
           *slot == 0 ? " or index" : "");
    }
    if (fields.size() != expectedFields)
      fail(weftInvalidArgument, "WEFT_FUSION entry '{}' has extra fields", entry);
    named[*slot] = true;
  }
  if (!index.empty()) {
    if (named[0] && settings[0].mode != weftFusionIndex) {
      fail(weftInvalidArgument, "WEFT_FUSION_INDEX is set but WEFT_FUSION gives AllReduce another mode");
    }
    settings[0].mode = weftFusionIndex;
    settings[0].splitIndices = parseIndexList(index);
  }
  return settings;
}

FusionSettings::FusionSettings()
    : environment_(
          parseFusionEnvironment(config::getOr("WEFT_FUSION", ""), config::getOr("WEFT_FUSION_INDEX", ""))) {}

void FusionSettings::set(size_t slot, std::optional<FusionSetting> setting) {
  std::lock_guard<std::mutex> lock(mutex_);
  explicit_.at(slot) = std::move(setting);
}

FusionSetting FusionSettings::get(size_t slot) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return explicit_.at(slot).value_or(environment_.at(slot));
}

}  // namespace weft
