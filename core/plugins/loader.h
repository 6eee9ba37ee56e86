// Finds plugin files, dlopens them and checks their ABI. Every attempt is logged with its outcome; the
// reason for a failure is one of: not found, cannot be opened, missing symbol, wrong ABI version, init
// failed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "weft/plugin.h"

namespace weft {

struct LoadedPlugin {
  std::string name;
  std::string path;
  void* library = nullptr;  // dlopen handle
  const weftPlugin_v1_t* plugin = nullptr;
  void* context = nullptr;  // from plugin->init
  weftTransportProps_v1 props{};
  const weftBackendListOps_v1* backendList = nullptr;                // the optional list extension of its backend
  const weftBackendAdviceOps_v1* backendAdvice = nullptr;            // the optional advice of its backend
  const weftBackendCopiedInputOps_v1* backendCopiedInput = nullptr;  // its backend's in-place runs from a copy
  const weftTransportVecOps_v1* transportVec = nullptr;    // the optional vectored messages of its transport
  const weftTransportPairOps_v1* transportPair = nullptr;  // the optional one wire both ways of its transport
  const weftMemoryOps_v1* memory = nullptr;                // the optional shared memory (weftMemAlloc)
};

struct LoadAttempt {
  std::string name;
  std::string path;  // the file tried, or empty when none was found
  bool loaded = false;
  std::string reason;  // why it failed
  // What the file's plugin table says, for weft-info: its ABI version (0 when no table was found) and, when
  // that version is understood, its kind (-1 otherwise: another version's layout may differ).
  unsigned int abiVersion = 0;
  int kind = -1;
};

// While one lives on a thread, what plugins log there as warnings and errors is logged at debug level: core
// expects the calls it makes meanwhile to fail, and says itself, once, what a failure means (a fault notice
// sent to a peer that has already left made the shm plugin log "nobody listens there" as an error).
class PluginFailuresExpected {
 public:
  PluginFailuresExpected();
  ~PluginFailuresExpected();
  PluginFailuresExpected(const PluginFailuresExpected&) = delete;
  PluginFailuresExpected& operator=(const PluginFailuresExpected&) = delete;

 private:
  bool outer_;  // one already lived on this thread
};

// File name of plugin `name`: libweft-plugin-<name>.so (weft-info's survey reads names back from it).
inline constexpr std::string_view kPluginFilePrefix = "libweft-plugin-";
inline constexpr std::string_view kPluginFileSuffix = ".so";
std::string pluginFileName(const std::string& name);

// Folders searched, in order: <directory of libweft.so>/weft, then each entry of WEFT_PLUGIN_PATH.
std::vector<std::string> pluginSearchPath();

// Loads plugin `name` from the first folder of `searchPath` that holds its file. On success fills
// `loaded` (init already called); the attempt says what happened either way.
LoadAttempt loadPlugin(const std::string& name, const std::vector<std::string>& searchPath, LoadedPlugin& loaded);

// Loads one file. Probes the newest symbol first (only v1 exists today).
LoadAttempt loadPluginFile(const std::string& name, const std::string& path, LoadedPlugin& loaded);

// The host table plugins receive: logging through Weft's logger and config lookups.
const weftPluginHost_v1* pluginHost();

}  // namespace weft
