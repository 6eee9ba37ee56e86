// The integer a caller passed for a C enum. C lets a caller pass any int where the ABI takes an enum;
// in C++ loading an enum object that holds a value outside its enumerators' range is undefined, so values
// to be checked are read as the int they are stored as.
#pragma once

#include <cstring>
#include <type_traits>

namespace weft {

template <typename Enum>
int enumValue(const Enum& value) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int));
  int raw = 0;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

}  // namespace weft
