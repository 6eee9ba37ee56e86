// textReport(): weft-info's default, human-readable output.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/info/info_report.h"

namespace weft::info {
namespace {

std::string pluginLine(const PluginReport& p) {
  std::string status = p.loaded ? "loaded" : "not loaded";
  std::string abi = p.abiVersion == 0 ? "-" : std::to_string(p.abiVersion);
  std::string line = fmt::format("  {:<12} {:<10} {:<10} ABI {:<3} {}", p.name, status,
                                 p.kind.empty() ? "-" : p.kind, abi, p.file.empty() ? "-" : p.file);
  if (p.loaded && !p.reach.empty()) {
    line += fmt::format("\n  {:<12} {} reach, ~{:g} us, ~{:g} GB/s{}", "", p.reach, p.latencyUs, p.bandwidthGBps,
                        p.offersBackend ? ", offers a collective backend" : "");
  }
  if (!p.extensions.empty()) line += fmt::format("\n  {:<12} extensions: {}", "", fmt::join(p.extensions, ", "));
  if (!p.loaded) line += fmt::format("\n  {:<12} why: {}", "", p.reason);
  if (!p.shadowedBy.empty())
    line += fmt::format("\n  {:<12} shadowed by {} (the loader uses that one)", "", p.shadowedBy);
  return line + "\n";
}

std::string settingsTable(const std::vector<SettingReport>& settings) {
  size_t width = 0;
  for (const SettingReport& s : settings) width = std::max(width, s.name.size());
  std::string out;
  for (const SettingReport& s : settings) {
    if (s.value) {
      out += fmt::format("  {:<{}} = {:<12} ({})\n", s.name, width, "'" + s.value->text + "'",
                         config::sourceName(s.value->source));
    } else {
      out += fmt::format("  {:<{}}   unset\n", s.name, width);
    }
  }
  return out;
}

}  // namespace

std::string textReport(const InfoReport& r) {
  std::string out = fmt::format("Weft {} (version code {})\nlibrary: {}\n\n", r.version, r.versionCode, r.library);
  out += fmt::format("Plugins (searched in: {}):\n", r.pluginSearchPath.empty()
                                                         ? std::string("no folder")
                                                         : fmt::format("{}", fmt::join(r.pluginSearchPath, ", ")));
  for (const PluginReport& p : r.plugins) out += pluginLine(p);
  out += "\nTopology:\n" + topology::describe(r.topology);
  out += "\nSettings (value and where it came from):\n" + settingsTable(r.settings);
  if (!r.unrecognised.empty()) {
    out += "\nWEFT_* variables Weft does not know (misspelt?):\n" + settingsTable(r.unrecognised);
  }
  return out;
}

}  // namespace weft::info
