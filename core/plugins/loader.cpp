#include "core/plugins/loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>

#include "core/common/config.h"
#include "core/common/log.h"

namespace weft {
namespace {

thread_local bool pluginFailuresExpected = false;  // a PluginFailuresExpected lives on this thread

void hostLog(weftLogLevel_t level, const char* pluginName, const char* message) {
  const char* name = pluginName ? pluginName : "?";
  const char* text = message ? message : "";
  if (pluginFailuresExpected && level >= weftLogWarn) level = weftLogDebug;
  switch (level) {
    case weftLogTrace:
      log::trace("[{}] {}", name, text);
      break;
    case weftLogDebug:
      log::debug("[{}] {}", name, text);
      break;
    case weftLogInfo:
      log::info("[{}] {}", name, text);
      break;
    case weftLogWarn:
      log::warn("[{}] {}", name, text);
      break;
    default:
      log::error("[{}] {}", name, text);
      break;
  }
}

const char* hostGetConfig(const char* name) {
  // The ABI promises the environment or the tuning file (config::lookup). The returned pointer must outlive
  // the call, so each distinct value is kept once for the rest of the process (a set's nodes never move).
  if (name == nullptr) return nullptr;
  auto value = config::lookup(name);
  if (!value) return nullptr;
  static std::mutex mutex;
  static auto* kept = new std::set<std::string>();  // never destroyed: plugins may read until exit
  std::lock_guard lock(mutex);
  return kept->insert(std::move(value->text)).first->c_str();
}

// Directory of the shared object that holds this function: libweft.so in the build or install tree.
std::string libraryDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&libraryDirectory), &info) == 0 || info.dli_fname == nullptr) return {};
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

LoadAttempt failed(LoadAttempt attempt, std::string reason) {
  attempt.reason = std::move(reason);
  log::debug("plugin {}: not loaded from {}: {}", attempt.name, attempt.path.empty() ? "-" : attempt.path,
             attempt.reason);
  return attempt;
}

}  // namespace

PluginFailuresExpected::PluginFailuresExpected() : outer_(pluginFailuresExpected) {
  pluginFailuresExpected = true;
}

PluginFailuresExpected::~PluginFailuresExpected() { pluginFailuresExpected = outer_; }

const weftPluginHost_v1* pluginHost() {
  static const weftPluginHost_v1 host = {WEFT_PLUGIN_ABI_VERSION, &hostLog, &hostGetConfig};
  return &host;
}

std::string pluginFileName(const std::string& name) {
  return std::string(kPluginFilePrefix) + name + std::string(kPluginFileSuffix);
}

std::vector<std::string> pluginSearchPath() {
  std::vector<std::string> path;
  if (std::string dir = libraryDirectory(); !dir.empty()) path.push_back(dir + "/" + WEFT_PLUGIN_SUBDIR);
  if (auto extra = config::get("WEFT_PLUGIN_PATH")) {
    std::stringstream entries(*extra);
    for (std::string entry; std::getline(entries, entry, ':');) {
      if (!entry.empty()) path.push_back(entry);
    }
  }
  return path;
}

LoadAttempt loadPlugin(const std::string& name, const std::vector<std::string>& searchPath, LoadedPlugin& loaded) {
  for (const std::string& dir : searchPath) {
    std::string file = dir + "/" + pluginFileName(name);
    if (access(file.c_str(), F_OK) == 0) return loadPluginFile(name, file, loaded);
  }
  std::string where;
  for (const std::string& dir : searchPath) where += (where.empty() ? "" : ", ") + dir;
  return failed({name, "", false, ""},
                "not found: no " + pluginFileName(name) + " in " + (where.empty() ? "(no folder)" : where));
}

namespace {

// An optional extension a plugin exports next to its table (a versioned struct of its own): kept when its
// version is 1 and `complete` says its calls are there, otherwise ignored with a warning (the plugin still
// loads). Null when the plugin does not export it.
template <typename Extension, typename Complete>
const Extension* optionalExtension(void* library, const std::string& name, const char* symbol, Complete complete) {
  auto* extension = static_cast<const Extension*>(dlsym(library, symbol));
  if (extension == nullptr) return nullptr;
  if (extension->abiVersion == 1 && complete(*extension)) return extension;
  log::warn("plugin {}: ignoring {} (ABI version {} or calls missing; this Weft understands 1)", name, symbol,
            extension->abiVersion);
  return nullptr;
}

}  // namespace

LoadAttempt loadPluginFile(const std::string& name, const std::string& path, LoadedPlugin& loaded) {
  LoadAttempt attempt{name, path, false, ""};
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return failed(attempt, std::string("cannot be opened: ") + (why ? why : "dlopen failed"));
  }
  auto* plugin = static_cast<const weftPlugin_v1_t*>(dlsym(library, WEFT_PLUGIN_SYMBOL_V1));
  if (plugin == nullptr) {
    dlclose(library);
    return failed(attempt, "missing symbol " WEFT_PLUGIN_SYMBOL_V1);
  }
  attempt.abiVersion = plugin->abiVersion;
  if (plugin->abiVersion != 1) {
    unsigned int version = plugin->abiVersion;
    dlclose(library);
    return failed(attempt, "wrong ABI version " + std::to_string(version) +
                               " in " WEFT_PLUGIN_SYMBOL_V1 " (this Weft understands 1)");
  }
  attempt.kind = plugin->kind;
  if (plugin->init == nullptr || (plugin->kind == weftPluginTransport && plugin->transport == nullptr)) {
    dlclose(library);
    return failed(attempt, "incomplete plugin table (no init or no transport calls)");
  }
  void* context = nullptr;
  if (weftResult_t r = plugin->init(pluginHost(), &context); r != weftSuccess) {
    dlclose(library);
    return failed(attempt, std::string("init failed: ") + weftGetErrorString(r));
  }
  loaded = LoadedPlugin{name, path, library, plugin, context};  // the extensions: below
  if (plugin->getProperties) plugin->getProperties(context, &loaded.props);
  if (plugin->transport != nullptr) {
    loaded.transportVec = optionalExtension<weftTransportVecOps_v1>(
        library, name, WEFT_TRANSPORT_VEC_SYMBOL_V1, [](const auto& vec) { return vec.isendv && vec.irecvv; });
    loaded.transportPair = optionalExtension<weftTransportPairOps_v1>(
        library, name, WEFT_TRANSPORT_PAIR_SYMBOL_V1, [](const auto& pair) { return pair.connectPaired; });
  }
  if (plugin->backend != nullptr) {
    loaded.backendList = optionalExtension<weftBackendListOps_v1>(
        library, name, WEFT_BACKEND_LIST_SYMBOL_V1,
        [](const auto& list) { return list.supportsList && list.runList; });
    loaded.backendAdvice = optionalExtension<weftBackendAdviceOps_v1>(
        library, name, WEFT_BACKEND_ADVICE_SYMBOL_V1,
        [](const auto& advice) { return advice.prefersPluginMemory != nullptr; });
    loaded.backendCopiedInput = optionalExtension<weftBackendCopiedInputOps_v1>(
        library, name, WEFT_BACKEND_COPIED_INPUT_SYMBOL_V1,
        [](const auto& copied) { return copied.runFromCopy != nullptr; });
  }
  loaded.memory = optionalExtension<weftMemoryOps_v1>(
      library, name, WEFT_MEMORY_SYMBOL_V1, [](const auto& memory) { return memory.alloc && memory.free; });
  attempt.loaded = true;
  log::info("plugin {}: loaded from {}", name, path);
  return attempt;
}

}  // namespace weft
