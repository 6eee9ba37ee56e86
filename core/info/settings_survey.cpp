// surveySettings() and unrecognisedSettings(): every WEFT_* variable with its value and where it came from.
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/info/info_report.h"

extern char** environ;  // NOLINT: POSIX declares it for the application to define

namespace weft::info {

std::vector<SettingReport> surveySettings() {
  const auto& table = config::variables();
  std::vector<SettingReport> settings(table.size());
  std::transform(table.begin(), table.end(), settings.begin(), [](const config::Variable& v) {
    return SettingReport{v.name, v.description, config::lookup(v.name)};
  });
  return settings;
}

std::vector<SettingReport> unrecognisedSettings() {
  std::vector<SettingReport> unknown;
  const auto& table = config::variables();
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text(*entry);
    size_t equals = text.find('=');
    if (text.rfind("WEFT_", 0) != 0 || equals == std::string::npos) continue;
    std::string name = text.substr(0, equals);
    auto named = [&](const config::Variable& v) { return name == v.name; };
    if (std::none_of(table.begin(), table.end(), named)) {
      unknown.push_back({name, "", config::Value{text.substr(equals + 1), config::Source::Environment}});
    }
  }
  std::sort(unknown.begin(), unknown.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return unknown;
}

}  // namespace weft::info
