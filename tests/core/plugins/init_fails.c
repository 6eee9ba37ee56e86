/* A plugin whose init fails, as one whose device or library is missing would. */
#include "weft/plugin.h"

static weftResult_t failingInit(const weftPluginHost_v1* host, void** ctx) {
  (void)ctx;
  host->log(weftLogInfo, "initfails", "no device here");
  return weftSystemError;
}

static const weftTransportOps_v1 ops;

WEFT_API const weftPlugin_v1_t weftPlugin_v1 = {
    WEFT_PLUGIN_ABI_VERSION, "initfails", weftPluginTransport, failingInit, 0, 0, &ops, 0};
