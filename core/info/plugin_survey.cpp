// surveyPlugins(): every plugin weft-info can find, loaded through the same loader as communicators use.
#include <algorithm>
#include <filesystem>
#include <string_view>

#include "core/info/info_report.h"
#include "core/plugins/loader.h"
#include "core/plugins/registry.h"

namespace weft::info {
namespace {

namespace fs = std::filesystem;

// The search path without repeats (WEFT_PLUGIN_PATH may name the default folder again).
std::vector<std::string> distinctFolders(const std::vector<std::string>& searchPath) {
  std::vector<std::string> folders;
  std::vector<fs::path> seen;
  for (const std::string& dir : searchPath) {
    std::error_code ignored;
    fs::path canonical = fs::weakly_canonical(dir, ignored);
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) continue;
    seen.push_back(canonical);
    folders.push_back(dir);
  }
  return folders;
}

// (name, file) of every libweft-plugin-<name>.so in one folder, sorted by name.
std::vector<std::pair<std::string, std::string>> pluginFilesIn(const std::string& dir) {
  // A prefix and suffix test rather than <regex>: std::regex was a quarter of its unity batch's compile time.
  const std::string_view prefix = kPluginFilePrefix, suffix = kPluginFileSuffix;
  std::vector<std::pair<std::string, std::string>> files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    std::string fileName = entry.path().filename().string();
    std::string_view name = fileName;
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
      continue;
    name.remove_prefix(prefix.size());
    name.remove_suffix(suffix.size());
    files.emplace_back(std::string(name), entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const char* kindName(int kind) {
  switch (kind) {
    case weftPluginTransport:
      return "transport";
    case weftPluginBackend:
      return "backend";
    default:
      return "";
  }
}

PluginReport report(const LoadAttempt& attempt, const LoadedPlugin& plugin) {
  PluginReport r;
  r.name = attempt.name;
  r.file = attempt.path;
  r.loaded = attempt.loaded;
  r.reason = attempt.reason;
  r.abiVersion = attempt.abiVersion;
  r.kind = kindName(attempt.kind);
  if (!attempt.loaded) return r;
  r.offersBackend = plugin.plugin->backend != nullptr;
  // Those the loader kept: one it ignored (wrong version, a call missing) is not one Weft uses.
  if (plugin.transportVec != nullptr) r.extensions.emplace_back(WEFT_TRANSPORT_VEC_SYMBOL_V1);
  if (plugin.transportPair != nullptr) r.extensions.emplace_back(WEFT_TRANSPORT_PAIR_SYMBOL_V1);
  if (plugin.backendList != nullptr) r.extensions.emplace_back(WEFT_BACKEND_LIST_SYMBOL_V1);
  if (plugin.backendAdvice != nullptr) r.extensions.emplace_back(WEFT_BACKEND_ADVICE_SYMBOL_V1);
  if (plugin.backendCopiedInput != nullptr) r.extensions.emplace_back(WEFT_BACKEND_COPIED_INPUT_SYMBOL_V1);
  if (plugin.memory != nullptr) r.extensions.emplace_back(WEFT_MEMORY_SYMBOL_V1);
  if (plugin.plugin->kind == weftPluginTransport) {
    r.reach = plugin.props.reach == weftReachSameHost ? "same host" : "any host";
    r.latencyUs = plugin.props.latencyUs;
    r.bandwidthGBps = plugin.props.bandwidthGBps;
  }
  // Loaded only to be described. Not dlclosed: the process ends soon, and a plugin's exit handlers or
  // threads may still point into its code.
  if (plugin.plugin->finalize != nullptr) plugin.plugin->finalize(plugin.context);
  return r;
}

}  // namespace

std::vector<PluginReport> surveyPlugins(const std::vector<std::string>& searchPath) {
  std::vector<PluginReport> reports;
  // Known names first, found as the registry finds them: the first folder holding the file wins.
  for (const std::string& name : knownPlugins()) {
    LoadedPlugin plugin;
    reports.push_back(report(loadPlugin(name, searchPath, plugin), plugin));
  }
  // Then every other plugin file in the search path (third-party plugins, copies shadowed by an earlier one).
  for (const std::string& dir : distinctFolders(searchPath)) {
    for (const auto& [name, file] : pluginFilesIn(dir)) {
      auto sameName = [&, &name = name](const PluginReport& r) { return r.name == name && !r.file.empty(); };
      auto earlier = std::find_if(reports.begin(), reports.end(), sameName);
      std::error_code notComparable;
      if (earlier != reports.end() && fs::equivalent(earlier->file, file, notComparable)) continue;
      std::string shadowedBy = earlier != reports.end() ? earlier->file : "";
      LoadedPlugin plugin;
      reports.push_back(report(loadPluginFile(name, file, plugin), plugin));
      reports.back().shadowedBy = shadowedBy;
    }
  }
  return reports;
}

}  // namespace weft::info
