// Stream entry points of the C ABI.
#include "core/api/guard.h"
#include "core/stream/stream.h"

using namespace weft;

extern "C" {

WEFT_API weftResult_t weftStreamCreate(weftStream_t* stream) {
  return guarded(__func__, [&] {
    requireNotNull(stream, "stream");
    *stream = new weftStream();
  });
}

WEFT_API weftResult_t weftStreamSynchronize(weftStream_t stream) {
  return guarded(__func__, [&] {
    requireStreamOrNull(stream);
    if (stream != nullptr) stream->synchronize();
  });
}

WEFT_API weftResult_t weftStreamQuery(weftStream_t stream) {
  weftResult_t result = guarded(__func__, [&] { requireStreamOrNull(stream); });
  if (result != weftSuccess || stream == nullptr) return result;
  return stream->idle() ? weftSuccess : weftInProgress;
}

WEFT_API weftResult_t weftStreamDestroy(weftStream_t stream) {
  return guarded(__func__, [&] {
    requireNotNull(stream, "stream");
    requireStreamOrNull(stream);
    delete stream;
  });
}

}  // extern "C"
