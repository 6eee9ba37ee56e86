// Internal error type: code below the C ABI throws weft::Error; the API boundary turns it into a
// weftResult_t plus the thread-local message returned by weftGetLastErrorMessage().
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "weft/weft.h"

namespace weft {

class Error : public std::runtime_error {
 public:
  Error(weftResult_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  weftResult_t code() const { return code_; }

 private:
  weftResult_t code_;
};

// A failure that every rank of the communicator finds alike (WEFT_CHECK's verdict on the ranks' calls). It
// is not announced to the other ranks (core/comm/control_channel.h): they reach the same verdict
// themselves, and a notice arriving first would replace their own, more precise message.
class AgreedError : public Error {
 public:
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void fail(weftResult_t code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace weft
