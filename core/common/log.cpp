#include "core/common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <mutex>

#include "core/common/config.h"

namespace weft::log {
namespace {

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "?";
  return name;
}

void applyPattern(spdlog::logger& logger, int rank) {
  std::string rankText = rank < 0 ? "-" : std::to_string(rank);
  logger.set_pattern("[%H:%M:%S.%e] [" + hostName() + ":" + std::to_string(getpid()) + ":" + rankText +
                     "] [weft %l] %v");
}

spdlog::logger& create() {
  // Own logger (not the default one) so an application's spdlog settings and ours stay apart.
  static auto logger = spdlog::stderr_color_mt("weft");
  auto level = spdlog::level::from_str(config::getOr("WEFT_LOG_LEVEL", "warn"));
  logger->set_level(level);
  applyPattern(*logger, -1);
  return *logger;
}

}  // namespace

spdlog::logger& get() {
  static spdlog::logger& logger = create();
  return logger;
}

void setRank(int rank) {
  static std::once_flag once;
  std::call_once(once, [rank] { applyPattern(get(), rank); });
}

}  // namespace weft::log
