// A plugin's printf-style log line through the host's logger (host->log), which adds time, rank and level.
// Each plugin wraps it with its own name (shm_log.h, tcp_log.h, mpi_log.h).
#ifndef WEFT_PLUGINS_COMMON_PLUGIN_LOG_H
#define WEFT_PLUGINS_COMMON_PLUGIN_LOG_H

#include <cstdarg>
#include <cstdio>

#include "weft/plugin.h"

namespace weft::plugin {

inline void vlogf(const weftPluginHost_v1* host, weftLogLevel_t level, const char* pluginName, const char* format,
                  va_list args) {
  if (host == nullptr || host->log == nullptr) return;
  char message[1024];
  std::vsnprintf(message, sizeof(message), format, args);
  host->log(level, pluginName, message);
}

}  // namespace weft::plugin

#endif  // WEFT_PLUGINS_COMMON_PLUGIN_LOG_H
