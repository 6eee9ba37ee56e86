#include "core/plugins/registry.h"

#include <algorithm>
#include <mutex>
#include <sstream>

#include "core/common/config.h"
#include "core/common/error.h"
#include "core/common/log.h"

namespace weft {
namespace {

struct Registry {
  std::mutex mutex;
  bool loaded = false;
  std::vector<LoadedPlugin> transports;
  std::vector<LoadAttempt> attempts;
  std::string error;  // why the selection cannot be satisfied; repeated at every communicator creation
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: plugins stay loaded until exit
  return *r;
}

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

void loadAll(Registry& r) {
  PluginSelection selection = parsePluginSelection(config::getOr("WEFT_PLUGINS", ""));
  std::vector<std::string> names = selection.requested;
  if (names.empty()) {
    for (const std::string& name : knownPlugins()) {
      if (!contains(selection.excluded, name)) names.push_back(name);
    }
  }
  std::vector<std::string> searchPath = pluginSearchPath();
  for (const std::string& name : names) {
    LoadedPlugin plugin;
    LoadAttempt attempt = loadPlugin(name, searchPath, plugin);
    r.attempts.push_back(attempt);
    bool requested = contains(selection.requested, name);
    if (!attempt.loaded) {
      if (requested) {
        r.error = "plugin '" + name + "' requested by WEFT_PLUGINS could not be loaded from " +
                  (attempt.path.empty() ? std::string("any plugin folder") : attempt.path) + ": " + attempt.reason;
        log::error("{}", r.error);
      }
      continue;
    }
    if (plugin.plugin->kind == weftPluginTransport) {
      r.transports.push_back(plugin);
    } else if (requested) {
      r.error = "plugin '" + name + "' is a backend; backends are not supported by this version yet";
    }
  }
  if (r.error.empty() && r.transports.empty()) {
    std::string tried;
    for (const LoadAttempt& a : r.attempts) tried += "\n  " + a.name + ": " + a.reason;
    r.error = "no transport plugin could be loaded; attempts:" + tried;
  }
}

}  // namespace

PluginSelection parsePluginSelection(const std::string& text) {
  PluginSelection selection;
  if (text.empty()) return selection;
  std::stringstream entries(text);
  for (std::string entry; std::getline(entries, entry, ',');) {
    bool exclude = !entry.empty() && entry[0] == '^';
    std::string name = exclude ? entry.substr(1) : entry;
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) {
      fail(weftInvalidArgument, "WEFT_PLUGINS='{}': '{}' is not a plugin name", text, entry);
    }
    (exclude ? selection.excluded : selection.requested).push_back(name);
  }
  if (!selection.requested.empty() && !selection.excluded.empty()) {
    fail(weftInvalidArgument, "WEFT_PLUGINS='{}': give either names to load or ^names to exclude, not both", text);
  }
  return selection;
}

const std::vector<std::string>& knownPlugins() {
  static const std::vector<std::string> names = {"shm", "verbs", "tcp"};
  return names;
}

const std::vector<LoadedPlugin>& loadedTransports() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (!r.loaded) {
    r.loaded = true;
    try {
      loadAll(r);
    } catch (const Error& e) {
      r.error = e.what();
    }
  }
  if (!r.error.empty()) fail(weftPluginError, "{}", r.error);
  return r.transports;
}

std::vector<LoadAttempt> pluginAttempts() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.attempts;
}

}  // namespace weft
