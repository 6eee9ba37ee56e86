// weft-info's entry point. It lives in libweft.so (exported, but not part of the public C ABI in weft.h) so
// that the tool sees exactly what an application sees: the plugin folder found from libweft.so's own
// location (dladdr), the same loader and settings. bin/weft-info is only a trampoline to it.
#pragma once

#include "weft/weft.h"

extern "C" WEFT_API int weftInternalInfoMain(int argc, char** argv);
