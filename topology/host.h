// Which host a rank runs on: hostname plus the kernel's boot id, so that two containers with the same
// hostname on different machines differ. WEFT_HOST_ID overrides it, letting tests make one machine look
// like several.
#pragma once

#include <string>

namespace weft {

std::string hostIdentity();

}  // namespace weft
