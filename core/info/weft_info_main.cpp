// bin/weft-info: prints Weft's version, plugins, topology and settings. Built as its own executable and kept
// out of libweft.so's sources (core/CMakeLists.txt); all the work is in libweft.so (core/info/entry.h).
#include "core/info/entry.h"

int main(int argc, char** argv) { return weftInternalInfoMain(argc, argv); }
