#include "core/tuner/tuning_file.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/common/config.h"
#include "core/common/error.h"

namespace weft {
namespace {

constexpr int kTuningVersion = 1;

using Json = nlohmann::json;

// An integer field. nlohmann's get<int>() casts a float or a wider integer, which is undefined for 1e30
// (found by tests/fuzz); a value that is not an integer in int's range is refused instead.
int intField(const Json& object, const char* key, const std::string& path) {
  const double number = object.at(key).get<double>();  // a non-number throws Json::type_error
  if (!(number >= INT_MIN && number <= INT_MAX) || std::floor(number) != number) {
    fail(weftInvalidArgument, "tuning file {}: '{}' is {}, not an integer", path, key, object.at(key).dump());
  }
  return static_cast<int>(number);
}

TuningEntry entryOf(const Json& e, const std::string& path) {
  const std::string collective = e.at("collective").get<std::string>();
  const std::string algorithm = e.at("algorithm").get<std::string>();
  const std::optional<Collective> c = collectiveNamed(collective);
  const std::optional<Algorithm> a = algorithmNamed(algorithm);
  if (!c || !a || !supports(*c, *a) || *a == Algorithm::Hierarchical) {
    fail(weftInvalidArgument, "tuning file {}: '{}' is not a flat algorithm of '{}'", path, algorithm, collective);
  }
  TuningEntry entry{e.at("transport").get<std::string>(),
                    *c,
                    *a,
                    intField(e, "nranks", path),
                    e.at("bytes").get<std::vector<double>>(),
                    e.at("times_us").get<std::vector<double>>()};
  if (entry.nranks < 2 || entry.nranks > 1 << 24) {
    fail(weftInvalidArgument, "tuning file {}: {} {} measured at nranks {}: at least 2 are needed", path,
         collective, algorithm, entry.nranks);
  }
  if (entry.bytes.size() < 2 || entry.bytes.size() != entry.timesUs.size() || entry.bytes.size() > 64) {
    fail(weftInvalidArgument, "tuning file {}: {} {} needs 2 to 64 sizes, each with a time", path, collective,
         algorithm);
  }
  for (size_t i = 0; i < entry.bytes.size(); ++i) {
    const bool ascending = i == 0 || entry.bytes[i] > entry.bytes[i - 1];
    if (!std::isfinite(entry.bytes[i]) || !std::isfinite(entry.timesUs[i]) || entry.bytes[i] < 0 ||
        entry.timesUs[i] < 0 || !ascending) {
      fail(weftInvalidArgument,
           "tuning file {}: {} {}: sizes must ascend and times be finite; a negative or non-finite number, or "
           "a size out of order, at position {}",
           path, collective, algorithm, i);
    }
  }
  return entry;
}

// A WEFT_* setting a tuning file may carry: any but the one that names the file.
bool isSetting(const std::string& name) {
  const std::vector<config::Variable>& all = config::variables();
  return name != "WEFT_TUNING_FILE" &&
         std::any_of(all.begin(), all.end(), [&](const config::Variable& v) { return name == v.name; });
}

}  // namespace

TuningFile readTuningFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(weftInvalidArgument, "WEFT_TUNING_FILE={}: cannot open it", path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parseTuningFile(text, path);
}

TuningFile parseTuningFile(const std::string& text, const std::string& path) {
  TuningFile file;
  try {
    const Json json = Json::parse(text);
    const int version = intField(json, "weft_tuning_version", path);
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
