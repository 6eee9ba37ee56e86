// The boundary between the C ABI and the C++ inside: no exception crosses it. Each entry point runs its
// body through guarded(), which turns a weft::Error (or anything else thrown) into a weftResult_t and
// records the message for weftGetLastErrorMessage().
#pragma once

#include <string>

#include "core/common/error.h"
#include "weft/weft.h"

namespace weft {

void setLastError(const std::string& message);
void clearLastError();

template <typename Body>
weftResult_t guarded(const char* function, Body&& body) noexcept {
  try {
    clearLastError();
    body();
    return weftSuccess;
  } catch (const Error& e) {
    setLastError(std::string(function) + ": " + e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    setLastError(std::string(function) + ": out of memory");
    return weftSystemError;
  } catch (const std::exception& e) {
    setLastError(std::string(function) + ": internal error: " + e.what());
    return weftInternalError;
  } catch (...) {
    setLastError(std::string(function) + ": internal error");
    return weftInternalError;
  }
}

// Argument checks shared by the entry points; each throws weftInvalidArgument naming the argument.
inline void requireNotNull(const void* pointer, const char* argument) {
  if (pointer == nullptr) fail(weftInvalidArgument, "{} is NULL", argument);
}

}  // namespace weft
