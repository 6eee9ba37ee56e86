// Logging through the host's logger (host->log), printf style.
#ifndef WEFT_PLUGINS_SHM_LOG_H
#define WEFT_PLUGINS_SHM_LOG_H

#include "weft/plugin.h"

namespace weft::shm {

inline constexpr const char* kPluginName = "shm";

void logf(const weftPluginHost_v1* host, weftLogLevel_t level, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_LOG_H
