// Where a checked operation goes: into the open group, or straight to its stream (NULL: run now).
#pragma once

#include "core/collectives/op.h"

struct weftStream;

namespace weft {

// Inside weftGroupStart/End the op is held until the outermost weftGroupEnd; otherwise it is issued.
void submit(const Op& op, weftStream* stream);
void groupStart();
// Issues everything held, one batch per stream; returns when the NULL-stream batch is done.
void groupEnd();

}  // namespace weft
