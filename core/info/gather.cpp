// gatherInfo(): version, library, plugins, topology and settings in one report.
#include <dlfcn.h>
#include <fmt/format.h>

#include "core/info/info_report.h"
#include "core/plugins/loader.h"

namespace weft::info {
namespace {

// The shared object holding this code: libweft.so, or the executable when linked in statically (tests).
std::string thisLibrary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&thisLibrary), &info) == 0 || info.dli_fname == nullptr) return "unknown";
  return info.dli_fname;
}

}  // namespace

InfoReport gatherInfo() {
  InfoReport report;
  weftGetVersion(&report.versionCode);
  report.version = fmt::format("{}.{}.{}", report.versionCode / 10000, report.versionCode / 100 % 100,
                               report.versionCode % 100);
  report.library = thisLibrary();
  report.pluginSearchPath = pluginSearchPath();
  report.plugins = surveyPlugins(report.pluginSearchPath);
  report.topology = topology::hostTopology();
  report.settings = surveySettings();
  report.unrecognised = unrecognisedSettings();
  return report;
}

}  // namespace weft::info
