#include "mpi_log.h"

#include <mpi.h>

#include <cstdarg>
#include <cstdio>

#include "common/plugin_log.h"

namespace weft::mpi {

void logf(const weftPluginHost_v1* host, weftLogLevel_t level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  plugin::vlogf(host, level, kPluginName, format, args);
  va_end(args);
}

std::string mpiFailure(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  // MPI_Error_string may be called before MPI_Init and after MPI_Finalize.
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    std::snprintf(text, sizeof(text), "error code %d", code);
  return std::string(call) + " failed: " + text;
}

}  // namespace weft::mpi
