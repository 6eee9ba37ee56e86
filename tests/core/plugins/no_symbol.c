/* A shared object that is not a Weft plugin: it exports no weftPlugin_v1. */
int weftNotAPlugin(void) { return 42; }
