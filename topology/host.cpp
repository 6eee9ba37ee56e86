#include "topology/host.h"

#include <unistd.h>

#include <fstream>

#include "core/common/config.h"

namespace weft {

std::string hostIdentity() {
  if (auto forced = config::get("WEFT_HOST_ID"); forced && !forced->empty()) return *forced;
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string bootId;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> bootId;
  return std::string(name) + "/" + bootId;
}

}  // namespace weft
