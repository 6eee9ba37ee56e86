// Byte counts in plugin settings (WEFT_SOCKET_BUFFER, WEFT_SHM_*_BYTES): digits with an optional K, M or G
// suffix (powers of 1024). Header-only: plugins may not link core/.
#ifndef WEFT_PLUGINS_COMMON_PARSE_BYTES_H
#define WEFT_PLUGINS_COMMON_PARSE_BYTES_H

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace weft::plugins {

// False when text is empty, negative, malformed or too large.
inline bool parseBytes(const char* text, unsigned long long* out) {
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *text == '-') return false;
  int shift = 0;
  if (*end == 'k' || *end == 'K') shift = 10;
  if (*end == 'm' || *end == 'M') shift = 20;
  if (*end == 'g' || *end == 'G') shift = 30;
  if (shift != 0) ++end;
  if (*end != '\0' || value > (ULLONG_MAX >> shift)) return false;
  *out = value << shift;
  return true;
}

}  // namespace weft::plugins

#endif  // WEFT_PLUGINS_COMMON_PARSE_BYTES_H
