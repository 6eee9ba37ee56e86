// Fusion settings and communicator statistics of the C ABI (the Ex calls are in collective_api.cpp).
#include "core/api/guard.h"
#include "core/comm/comm.h"
#include "core/common/enum_value.h"
#include "fusion/fusion_config.h"

using namespace weft;

extern "C" {

WEFT_API weftResult_t weftCommSetFusion(weftComm_t comm, weftCollType_t coll, const weftFusionConfig_t* config) {
  return guarded(__func__, [&] {
    requireComm(comm);
    std::optional<size_t> slot = fusionSlot(enumValue(coll));
    if (!slot) {
      fail(weftInvalidArgument,
           "coll {}: fusion applies to weftCollAllReduce, weftCollAllGather and "
           "weftCollReduceScatter",
           enumValue(coll));
    }
    std::optional<FusionSetting> setting;
    if (config != nullptr) setting = settingFromConfig(coll, *config);
    comm->fusion.set(*slot, std::move(setting));
  });
}

WEFT_API weftResult_t weftCommGetStats(weftComm_t comm, weftCommStats_t* stats) {
  return guarded(__func__, [&] {
    requireComm(comm);
    requireNotNull(stats, "stats");
    if (stats->magic != WEFT_COMM_STATS_MAGIC) {
      fail(weftInvalidArgument,
           "stats: magic 0x{:08x} is not a weftCommStats_t's (initialize it with WEFT_COMM_STATS_INITIALIZER)",
           stats->magic);
    }
    if (stats->size < sizeof(weftCommStats_t) || stats->version < 1) {
      fail(weftInvalidArgument, "stats: size {} / version {} is not a weftCommStats_t of version 1 or later",
           stats->size, stats->version);
    }
    stats->opsSubmitted = comm->opsSubmitted.load(std::memory_order_relaxed);
    stats->collectivesLaunched = comm->collectivesLaunched.load(std::memory_order_relaxed);
    stats->bytesFused = comm->bytesFused.load(std::memory_order_relaxed);
  });
}

}  // extern "C"
