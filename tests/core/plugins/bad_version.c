/* A plugin built for an ABI version this Weft does not know. */
#include "weft/plugin.h"

__attribute__((visibility("default"))) const weftPlugin_v1 weftPlugin_v1_table __asm__("weftPlugin_v1") = {
    99, "badversion", weftPluginTransport, 0, 0, 0, 0, 0};
