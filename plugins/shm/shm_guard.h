// The C ABI boundary of every plugin call: no exception escapes into Weft; each becomes a logged error code.
#ifndef WEFT_PLUGINS_SHM_GUARD_H
#define WEFT_PLUGINS_SHM_GUARD_H

#include <exception>
#include <new>

#include "shm_log.h"
#include "weft/plugin.h"

namespace weft::shm {

template <typename F>
weftResult_t guarded(const weftPluginHost_v1* host, const char* call, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    logf(host, weftLogError, "%s: out of memory", call);
    return weftSystemError;
  } catch (const std::exception& e) {
    logf(host, weftLogError, "%s: %s", call, e.what());
    return weftInternalError;
  } catch (...) {
    logf(host, weftLogError, "%s: unknown exception", call);
    return weftInternalError;
  }
}

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_GUARD_H
