// The test's sections; each runs on every rank and returns this rank's tally.
#pragma once

#include "common.h"

namespace colltest {

Report runCollectivesSection();  // every collective x type x op x count x placement x root x algorithm
Report runSplitSection();        // weftCommSplit: reordered sub-communicators and WEFT_SPLIT_NOCOLOR
Report runStreamSection();       // queued operations on created streams, two streams on two communicators
Report runSendRecvSection();     // grouped Send/Recv: ring, both directions, self

}  // namespace colltest
