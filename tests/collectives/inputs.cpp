#include "inputs.h"

#include <cstdio>

namespace colltest {

uint64_t inputSeed(uint64_t salt, int identity, weftDataType_t type, InputKind kind) {
  uint64_t s = mix64(salt);
  s = mix64(s ^ static_cast<uint64_t>(identity));
  return mix64(s ^ (static_cast<uint64_t>(type) * 4 + static_cast<uint64_t>(kind)));
}

std::string formatElem(weftDataType_t type, const Elem& e) {
  const TypeInfo& info = typeInfo(type);
  char buf[96];
  if (info.isFloat) {
    std::snprintf(buf, sizeof buf, "%.17g", e.d);
  } else if (info.isSigned) {
    std::snprintf(buf, sizeof buf, "%lld (0x%llx)", static_cast<long long>(signExtend(e.u, info.bits)),
                  static_cast<unsigned long long>(e.u));
  } else {
    std::snprintf(buf, sizeof buf, "%llu (0x%llx)", static_cast<unsigned long long>(e.u),
                  static_cast<unsigned long long>(e.u));
  }
  return buf;
}

void fillInputs(void* dst, weftDataType_t type, InputKind kind, uint64_t seed, uint64_t firstIndex, size_t count) {
  withType(type, [&]<weftDataType_t T>() {
    constexpr size_t size = typeInfo(T).size;
    auto* out = static_cast<unsigned char*>(dst);
    for (size_t i = 0; i < count; ++i) encodeT<T>(out + i * size, inputValueT<T>(kind, seed, firstIndex + i));
  });
}

}  // namespace colltest
