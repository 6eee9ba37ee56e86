// weftGetErrorString, weftGetLastErrorMessage, weftGetVersion, weftDataTypeSize.
#include <string>

#include "core/api/guard.h"
#include "core/common/enum_value.h"
#include "core/common/thread_object.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {
// This thread's last error message (core/common/thread_object.h): clearing it, on every call, costs one
// thread-local access and makes nothing while no call has failed.
struct LastErrorMessage {
  std::string text;
};
using LastError = ThreadObject<LastErrorMessage>;
}  // namespace
void setLastError(const std::string& message) { LastError::get().text = message; }
void clearLastError() {
  if (LastErrorMessage* message = LastError::ifMade()) message->text.clear();
}
}  // namespace weft

extern "C" {

WEFT_API const char* weftGetErrorString(weftResult_t result) {
  switch (result) {
    case weftSuccess:
      return "no error";
    case weftInvalidArgument:
      return "invalid argument";
    case weftInvalidUsage:
      return "invalid usage";
    case weftSystemError:
      return "system error";
    case weftInternalError:
      return "internal error";
    case weftRemoteError:
      return "remote error (a peer failed or sent something unexpected)";
    case weftTimeout:
      return "timeout";
    case weftInProgress:
      return "operation in progress";
    case weftPluginError:
      return "plugin error";
    case weftNotSupported:
      return "not supported";
  }
  return "unknown weftResult_t value";
}

WEFT_API const char* weftGetLastErrorMessage(void) {
  const weft::LastErrorMessage* message = weft::LastError::ifMade();
  return message != nullptr ? message->text.c_str() : "";
}

WEFT_API weftResult_t weftGetVersion(int* version) {
  return weft::guarded(__func__, [&] {
    weft::requireNotNull(version, "version");
    *version = WEFT_VERSION_CODE;
  });
}

WEFT_API weftResult_t weftDataTypeSize(weftDataType_t datatype, size_t* bytes) {
  return weft::guarded(__func__, [&] {
    weft::requireNotNull(bytes, "bytes");
    const int type = weft::enumValue(datatype);
    if (type < 0 || type >= WEFT_NUM_DATA_TYPES) weft::fail(weftInvalidArgument, "datatype {} is unknown", type);
    *bytes = weft::dataTypeSize(datatype);
  });
}

}  // extern "C"
