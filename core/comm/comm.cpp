#include "core/comm/comm.h"

#include "core/common/error.h"

bool weftComm::setError(weftResult_t code, const std::string& message) {
  std::lock_guard lock(errorMutex);
  if (asyncError != weftSuccess) return false;
  asyncError = code;
  asyncErrorMessage = message;
  failed.store(true, std::memory_order_release);
  return true;
}

void weftComm::failAndTell(weftResult_t code, const std::string& message) {
  if (setError(code, message) && control) control->announceFault(code, message);
}

void weftComm::throwFailure() {
  if (aborted.load()) weft::fail(weftInvalidUsage, "the communicator was aborted");
  std::lock_guard lock(errorMutex);
  if (asyncError != weftSuccess) {
    weft::fail(asyncError, "the communicator failed earlier and cannot be used: {}", asyncErrorMessage);
  }
}

namespace weft {

void requireComm(const weftComm* comm, const char* argument) {
  if (comm == nullptr) fail(weftInvalidArgument, "{} is NULL", argument);
  if (comm->magic != weftComm::kLiveMagic) fail(weftInvalidArgument, "{} is not a live communicator", argument);
}

}  // namespace weft
