#include "core/bootstrap/unique_id.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "core/common/error.h"

namespace weft {
namespace {

constexpr uint32_t kIdMagic = 0x57454654;  // "WEFT"
constexpr uint32_t kIdVersion = 1;

struct IdLayout {
  uint32_t magic;
  uint32_t version;
  uint64_t token;
  uint32_t addressLength;
  uint32_t reserved;
  unsigned char address[sizeof(sockaddr_in6)];
};
static_assert(sizeof(IdLayout) <= WEFT_UNIQUE_ID_BYTES);

}  // namespace

weftUniqueId encodeUniqueId(const UniqueIdContent& content) {
  if (content.root.length > sizeof(IdLayout::address)) fail(weftInternalError, "root address too long");
  IdLayout layout{};
  layout.magic = kIdMagic;
  layout.version = kIdVersion;
  layout.token = content.token;
  layout.addressLength = content.root.length;
  std::memcpy(layout.address, &content.root.storage, content.root.length);
  weftUniqueId id{};
  std::memcpy(id.internal, &layout, sizeof(layout));
  return id;
}

UniqueIdContent decodeUniqueId(const weftUniqueId& id) {
  IdLayout layout{};
  std::memcpy(&layout, id.internal, sizeof(layout));
  if (layout.magic != kIdMagic) fail(weftInvalidArgument, "commId is not a weftUniqueId (bad magic)");
  if (layout.version != kIdVersion) {
    fail(weftInvalidArgument, "commId has version {}, this Weft understands {}", layout.version, kIdVersion);
  }
  if (layout.addressLength == 0 || layout.addressLength > sizeof(layout.address)) {
    fail(weftInvalidArgument, "commId holds a malformed root address");
  }
  UniqueIdContent content;
  content.token = layout.token;
  content.root.length = layout.addressLength;
  std::memcpy(&content.root.storage, layout.address, layout.addressLength);
  return content;
}

uint64_t randomToken() {
  uint64_t token = 0;
  if (getrandom(&token, sizeof(token), 0) != sizeof(token)) {
    fail(weftSystemError, "getrandom: {}", std::strerror(errno));
  }
  return token;
}

bool tokensEqual(uint64_t a, uint64_t b) {
  volatile uint64_t difference = a ^ b;
  return difference == 0;
}

}  // namespace weft
