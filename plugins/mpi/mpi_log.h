// Logging through the host's logger (host->log), printf style, and MPI's own words for its error codes.
#ifndef WEFT_PLUGINS_MPI_LOG_H
#define WEFT_PLUGINS_MPI_LOG_H

#include <string>

#include "weft/plugin.h"

namespace weft::mpi {

inline constexpr const char* kPluginName = "mpi";

void logf(const weftPluginHost_v1* host, weftLogLevel_t level, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

// "MPI_Xxx failed: <MPI_Error_string>": what lastError and the logs say about a failed MPI call.
std::string mpiFailure(const char* call, int code);

}  // namespace weft::mpi

#endif  // WEFT_PLUGINS_MPI_LOG_H
