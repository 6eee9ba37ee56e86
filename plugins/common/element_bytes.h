// Bytes of one element of each Weft type, for plugins (which see only include/weft/plugin.h); 0 for a value
// that is not a type.
#ifndef WEFT_PLUGINS_COMMON_ELEMENT_BYTES_H
#define WEFT_PLUGINS_COMMON_ELEMENT_BYTES_H

#include <cstddef>

#include "weft/plugin.h"

namespace weft::plugin {

inline size_t elementBytes(weftDataType_t type) {
  switch (type) {
    case weftInt8:
    case weftUint8:
      return 1;
    case weftFloat16:
    case weftBfloat16:
      return 2;
    case weftInt32:
    case weftUint32:
    case weftFloat32:
      return 4;
    case weftInt64:
    case weftUint64:
    case weftFloat64:
      return 8;
    default:
      return 0;
  }
}

}  // namespace weft::plugin

#endif  // WEFT_PLUGINS_COMMON_ELEMENT_BYTES_H
