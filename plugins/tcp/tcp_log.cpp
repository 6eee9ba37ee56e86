#include "tcp_log.h"

#include <cstdarg>
#include <cstdio>

#include "common/plugin_log.h"

namespace weft::tcp {

void logf(const weftPluginHost_v1* host, weftLogLevel_t level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  plugin::vlogf(host, level, kPluginName, format, args);
  va_end(args);
}

}  // namespace weft::tcp
