// Logging through spdlog. Every line carries host, pid and rank so that the output of many ranks can be
// merged and still read. WEFT_LOG_LEVEL chooses the level (default warn).
#pragma once

#include <spdlog/spdlog.h>

namespace weft::log {

// The shared logger, configured on first use.
spdlog::logger& get();
// Called when this process learns its rank (first communicator): later lines show it.
void setRank(int rank);

template <typename... Args>
void trace(spdlog::format_string_t<Args...> f, Args&&... args) {
  get().trace(f, std::forward<Args>(args)...);
}
template <typename... Args>
void debug(spdlog::format_string_t<Args...> f, Args&&... args) {
  get().debug(f, std::forward<Args>(args)...);
}
template <typename... Args>
void info(spdlog::format_string_t<Args...> f, Args&&... args) {
  get().info(f, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(spdlog::format_string_t<Args...> f, Args&&... args) {
  get().warn(f, std::forward<Args>(args)...);
}
template <typename... Args>
void error(spdlog::format_string_t<Args...> f, Args&&... args) {
  get().error(f, std::forward<Args>(args)...);
}

}  // namespace weft::log
