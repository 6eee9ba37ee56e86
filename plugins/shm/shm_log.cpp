#include "shm_log.h"

#include <cstdarg>
#include <cstdio>

namespace weft::shm {

void logf(const weftPluginHost_v1* host, weftLogLevel_t level, const char* format, ...) {
  if (host == nullptr || host->log == nullptr) return;
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  host->log(level, kPluginName, message);
}

}  // namespace weft::shm
