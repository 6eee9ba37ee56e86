/* A plugin built for an ABI version this Weft does not know. */
#include "weft/plugin.h"

WEFT_API const weftPlugin_v1_t weftPlugin_v1 = {99, "badversion", weftPluginTransport, 0, 0, 0, 0, 0};
