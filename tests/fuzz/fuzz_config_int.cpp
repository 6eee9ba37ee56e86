// Integer settings (core/common/config.cpp getInt), fed as a tuning-file value, which may hold any bytes
// (JSON strings can carry "\u0000"). An accepted value must be the whole text read as a decimal long: no
// trailing bytes silently ignored. An empty value means "unset": the fallback.
#include <cerrno>
#include <cstdlib>
#include <string>

#include "core/common/config.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

constexpr const char* kName = "WEFT_TIMEOUT";
constexpr long kFallback = -12345;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool unset = unsetenv(kName) == 0;  // the environment would win over the tuning file
  FUZZ_CHECK(unset);
  const std::string text = weft::fuzz::text(data, size);
  weft::config::setFromTuningFile(kName, text);
  long value = 0;
  const bool accepted =
      weft::fuzz::accepts(weftInvalidArgument, [&] { value = weft::config::getInt(kName, kFallback); });
  weft::config::clearTuningFileValues();
  if (!accepted) return 0;
  if (text.empty()) {
    FUZZ_CHECK(value == kFallback);
    return 0;
  }
  FUZZ_CHECK(text.find('\0') == std::string::npos);
  errno = 0;
  char* end = nullptr;
  FUZZ_CHECK(std::strtol(text.c_str(), &end, 10) == value && errno == 0 && end == text.c_str() + text.size());
  return 0;
}
