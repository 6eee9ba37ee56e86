#include "core/tuner/tuning_file.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/common/config.h"
#include "core/common/error.h"

namespace weft {
namespace {

constexpr int kTuningVersion = 1;

using Json = nlohmann::json;

TuningEntry entryOf(const Json& e, const std::string& path) {
  const std::string collective = e.at("collective").get<std::string>();
  const std::string algorithm = e.at("algorithm").get<std::string>();
  const std::optional<Collective> c = collectiveNamed(collective);
  const std::optional<Algorithm> a = algorithmNamed(algorithm);
  if (!c || !a || !supports(*c, *a) || *a == Algorithm::Hierarchical) {
    fail(weftInvalidArgument, "tuning file {}: '{}' is not a flat algorithm of '{}'", path, algorithm, collective);
  }
  const int nranks = e.at("nranks").get<int>();
  const double latencyUs = e.at("latency_us").get<double>();
  const double nsPerByte = e.at("ns_per_byte").get<double>();
  if (!std::isfinite(latencyUs) || !std::isfinite(nsPerByte) || latencyUs < 0 || nsPerByte < 0) {
    fail(weftInvalidArgument, "tuning file {}: {} {} has a negative or non-finite parameter", path, collective,
         algorithm);
  }
  if (nranks < 2 || nranks > 1 << 24) {
    fail(weftInvalidArgument, "tuning file {}: {} {} measured at nranks {}: at least 2 are needed", path,
         collective, algorithm, nranks);
  }
  return {e.at("transport").get<std::string>(), *c, *a, nranks, latencyUs, nsPerByte};
}

bool isSetting(const std::string& name) {
  for (const config::Variable& v : config::variables()) {
    if (name == v.name) return name != "WEFT_TUNING_FILE";
  }
  return false;
}

}  // namespace

TuningFile readTuningFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(weftInvalidArgument, "WEFT_TUNING_FILE={}: cannot open it", path);
  TuningFile file;
  try {
    const Json json = Json::parse(in);
    const int version = json.at("weft_tuning_version").get<int>();
    if (version != kTuningVersion) {
      fail(weftInvalidArgument, "tuning file {}: version {}, this Weft reads version {}", path, version,
           kTuningVersion);
    }
    for (const Json& e : json.at("entries")) file.entries.push_back(entryOf(e, path));
    if (json.contains("settings")) {
      for (const auto& [name, value] : json.at("settings").items()) {
        if (!isSetting(name)) fail(weftInvalidArgument, "tuning file {}: '{}' is not a Weft setting", path, name);
        file.settings[name] = value.is_string() ? value.get<std::string>() : value.dump();
      }
    }
  } catch (const Json::exception& e) {
    fail(weftInvalidArgument, "tuning file {}: {}", path, e.what());
  }
  return file;
}

}  // namespace weft
