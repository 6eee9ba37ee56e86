// The plugins this process uses, loaded once (at the first communicator) as WEFT_PLUGINS says.
#pragma once

#include <string>
#include <vector>

#include "core/plugins/loader.h"

namespace weft {

struct PluginSelection {
  std::vector<std::string> requested;  // named in WEFT_PLUGINS: failing to load one is an error
  std::vector<std::string> excluded;   // ^name entries
};

// Parses WEFT_PLUGINS ("tcp,shm", "^mpi"); throws weftInvalidArgument on an empty or malformed entry.
PluginSelection parsePluginSelection(const std::string& text);

// Plugins Weft knows by name, in order of preference for a transport.
const std::vector<std::string>& knownPlugins();

// Loaded transports in order of preference. Throws weftPluginError naming the file and the reason when a
// requested plugin could not be loaded, or when no transport at all is available.
const std::vector<LoadedPlugin>& loadedTransports();

// Every load attempt made (for weft-info and error messages).
std::vector<LoadAttempt> pluginAttempts();

}  // namespace weft
