// Making communicators: from a unique id (through the bootstrap root) or by splitting a parent.
#pragma once

#include "core/bootstrap/unique_id.h"

struct weftComm;

namespace weft {

// Joins the communicator whose root is described by `id`. Collective over the nranks ranks.
weftComm* createComm(int nranks, int rank, const UniqueIdContent& id);

// Collective over parent: ranks with the same color form a new communicator, ordered by (key, parent
// rank). Returns nullptr for WEFT_SPLIT_NOCOLOR.
weftComm* splitComm(weftComm* parent, int color, int key);

}  // namespace weft
