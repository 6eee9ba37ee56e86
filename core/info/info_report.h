// What weft-info reports, gathered once and then written as text or JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/common/config.h"
#include "topology/topology.h"

namespace weft::info {

struct PluginReport {
  std::string name;
  std::string file;  // the file tried; empty when none was found
  bool loaded = false;
  std::string reason;           // why it did not load
  unsigned int abiVersion = 0;  // 0: no plugin table found
  std::string kind;             // "transport", "backend" or "" when unknown
  std::string shadowedBy;       // a file of the same name earlier in the search path, which the loader uses
  // Of a loaded transport:
  std::string reach;  // "any host" or "same host"
  double latencyUs = 0;
  double bandwidthGBps = 0;
  bool offersBackend = false;  // a transport that also runs whole collectives (shm's node backend)
  // Optional extensions it exports that the loader kept (their symbols), e.g. "weftTransportVec_v1".
  std::vector<std::string> extensions;
};

struct SettingReport {
  std::string name;
  std::string description;             // empty for a WEFT_* variable Weft does not know
  std::optional<config::Value> value;  // std::nullopt: unset
};

struct InfoReport {
  int versionCode = 0;
  std::string version;  // "major.minor.patch"
  std::string library;  // the libweft.so file in use
  std::vector<std::string> pluginSearchPath;
  std::vector<PluginReport> plugins;
  topology::HostTopology topology;
  std::vector<SettingReport> settings;      // every variable in config::variables(), in table order
  std::vector<SettingReport> unrecognised;  // WEFT_* in the environment that no table row names (typos)
};

// Loads every plugin it can find (known names, then any libweft-plugin-*.so in the search path), reports
// each outcome and finalizes the ones that loaded.
std::vector<PluginReport> surveyPlugins(const std::vector<std::string>& searchPath);
std::vector<SettingReport> surveySettings();
std::vector<SettingReport> unrecognisedSettings();

InfoReport gatherInfo();

std::string textReport(const InfoReport& report);
std::string jsonReport(const InfoReport& report);

}  // namespace weft::info
