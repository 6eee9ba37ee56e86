// What a weftUniqueId carries: the bootstrap root's address and the job token every connection of the
// job presents. Layout (128 bytes): magic, version, token, address length, address.
#pragma once

#include <cstdint>

#include "core/bootstrap/socket.h"
#include "weft/weft.h"

namespace weft {

struct UniqueIdContent {
  uint64_t token = 0;
  SocketAddress root;
};

weftUniqueId encodeUniqueId(const UniqueIdContent& content);
// Throws weftInvalidArgument when the bytes are not a Weft unique id of this version.
UniqueIdContent decodeUniqueId(const weftUniqueId& id);

// 64 random bits from the kernel.
uint64_t randomToken();
// Constant-time comparison, so a timing probe learns nothing about the token.
bool tokensEqual(uint64_t a, uint64_t b);

}  // namespace weft
