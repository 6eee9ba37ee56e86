// 10. Settings from the environment (WEFT_FUSION, WEFT_FUSION_INDEX, set by the CTest entry), and
// weftCommSetFusion overriding them; config NULL goes back to the environment's setting.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only
#endif
#include <mpi.h>

#include <cstdlib>
#include <cstring>

#include "fusion_test.h"

namespace fusiontest {

namespace {

const std::vector<TypeOp> kEnvTypeOps = {{weftFloat32, weftSum}, {weftBfloat16, weftAvg}, {weftInt8, weftMax}};

std::vector<OpSpec> ops(weftCollType_t coll, const TypeOp& t, int howMany, size_t bytes) {
  std::vector<OpSpec> out(howMany);
  for (int i = 0; i < howMany; ++i) {
    out[i].coll = coll;
    out[i].type = t.type;
    out[i].op = t.op;
    out[i].count = countFor(bytes, t.type) + (bytes < 4096 ? static_cast<size_t>(i) : 0);
    out[i].inPlace = i % 2;
  }
  return out;
}

void set(weftComm_t comm, weftCollType_t coll, const Setting* setting) {
  if (setting) {
    apply(comm, coll, *setting);
  } else {
    colltest::expectOk(weftCommSetFusion(comm, coll, nullptr),
                       std::string("weftCommSetFusion(") + collName(coll) + ", NULL)");
  }
}

// WEFT_FUSION="allreduce:size:1;allgather:off" (ReduceScatter left at the default, auto).
void sizeOneMiB(Context& ctx) {
  weftComm_t comm = ctx.view.comm;
  Settings env{};
  env.allReduce = {weftFusionSize, size_t{1} << 20, {}};
  env.allGather.mode = weftFusionOff;
  for (const TypeOp& t : kEnvTypeOps) {
    const std::string name = std::string(" ").append(typeOpName(t));
    const auto ar = ops(weftCollAllReduce, t, 10, 256 << 10);
    runModeled(ctx, "env size 1 MiB: 10 x 256 KiB AllReduces" + name, ar, Layout::kSeparate, env, 3);
    runModeled(ctx, "env allgather off: 6 AllGathers" + name, ops(weftCollAllGather, t, 6, 100),
               Layout::kContiguous, env, 6);
    runModeled(ctx, "env default reducescatter auto: 6 ReduceScatters" + name,
               ops(weftCollReduceScatter, t, 6, 100), Layout::kSeparate, env, 1);
    Settings over = env;
    over.allReduce.mode = weftFusionOff;
    set(comm, weftCollAllReduce, &over.allReduce);
    runModeled(ctx, "API off over env size: 10 AllReduces" + name, ar, Layout::kContiguous, over, 10);
    over.allReduce.mode = weftFusionAuto;
    set(comm, weftCollAllReduce, &over.allReduce);
    runModeled(ctx, "API auto over env size: 10 AllReduces" + name, ar, Layout::kSeparate, over, 1);
    set(comm, weftCollAllReduce, nullptr);
    runModeled(ctx, "config NULL: back to env size 1 MiB" + name, ar, Layout::kContiguous, env, 3);
    over.allGather.mode = weftFusionAuto;
    set(comm, weftCollAllGather, &over.allGather);
    runModeled(ctx, "API auto over env allgather off" + name, ops(weftCollAllGather, t, 6, 100), Layout::kSeparate,
               over, 1);
    set(comm, weftCollAllGather, nullptr);
    runModeled(ctx, "config NULL: back to env allgather off" + name, ops(weftCollAllGather, t, 6, 100),
               Layout::kSeparate, env, 6);
  }
}

// WEFT_FUSION="allreduce:index;reducescatter:off", WEFT_FUSION_INDEX="20,35" (AllGather: auto).
void index2035(Context& ctx) {
  weftComm_t comm = ctx.view.comm;
  Settings env{};
  env.allReduce = {weftFusionIndex, 0, {20, 35}};
  env.reduceScatter.mode = weftFusionOff;
  for (const TypeOp& t : kEnvTypeOps) {
    const std::string name = std::string(" ").append(typeOpName(t));
    const auto ar = ops(weftCollAllReduce, t, 40, 64);
    runModeled(ctx, "env index 20,35: 40 AllReduces" + name, ar, Layout::kSeparate, env, 3);
    runModeled(ctx, "env reducescatter off: 5 ReduceScatters" + name, ops(weftCollReduceScatter, t, 5, 64),
               Layout::kContiguous, env, 5);
    runModeled(ctx, "env default allgather auto: 5 AllGathers" + name, ops(weftCollAllGather, t, 5, 64),
               Layout::kSeparate, env, 1);
    Settings over = env;
    over.allReduce = {weftFusionIndex, 0, {10}};
    set(comm, weftCollAllReduce, &over.allReduce);
    runModeled(ctx, "API index 10 over env index: 40 AllReduces" + name, ar, Layout::kContiguous, over, 2);
    over.allReduce = {weftFusionSize, size_t{1} << 20, {}};
    set(comm, weftCollAllReduce, &over.allReduce);
    runModeled(ctx, "API size 1 MiB over env index: 10 x 256 KiB" + name, ops(weftCollAllReduce, t, 10, 256 << 10),
               Layout::kSeparate, over, 3);
    set(comm, weftCollAllReduce, nullptr);
    runModeled(ctx, "config NULL: back to env index" + name, ar, Layout::kSeparate, env, 3);
    over.reduceScatter.mode = weftFusionAuto;
    set(comm, weftCollReduceScatter, &over.reduceScatter);
    runModeled(ctx, "API auto over env reducescatter off" + name, ops(weftCollReduceScatter, t, 5, 64),
               Layout::kSeparate, over, 1);
    set(comm, weftCollReduceScatter, nullptr);
    runModeled(ctx, "config NULL: back to env reducescatter off" + name, ops(weftCollReduceScatter, t, 5, 64),
               Layout::kSeparate, env, 5);
  }
}

}  // namespace

uint64_t caseBadEnv() {
  const char* fusion = std::getenv("WEFT_FUSION");
  const std::string what = std::string("weftCommInitRank with WEFT_FUSION=") + (fusion ? fusion : "(unset)");
  colltest::setCurrentOp(what);
  weftUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (colltest::harness().worldRank == 0) colltest::expectOk(weftGetUniqueId(&id), "weftGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  weftComm_t comm = nullptr;
  const weftResult_t result =
      weftCommInitRank(&comm, colltest::harness().worldSize, id, colltest::harness().worldRank);
  const char* message = weftGetLastErrorMessage();
  Report report;
  if (result != weftInvalidArgument || message == nullptr || message[0] == '\0') {
    colltest::reportFailure(
        report, "case 10 env bad | " + what + " returned " + std::to_string(result) +
                    ", expected weftInvalidArgument with a message; message: " + (message ? message : "(null)"));
  } else if (colltest::harness().worldRank == 0) {
    std::printf("case 10 env bad: %s: weftInvalidArgument: %s\n", what.c_str(), message);
  }
  if (result == weftSuccess) colltest::expectOk(weftCommDestroy(comm), "weftCommDestroy");
  return report.failures;
}

void caseEnv(Context& ctx, const std::string& which) {
  const char* fusion = std::getenv("WEFT_FUSION");
  const char* index = std::getenv("WEFT_FUSION_INDEX");
  ctx.caseName += std::string(" (WEFT_FUSION=") + (fusion ? fusion : "(unset)") +
                  " WEFT_FUSION_INDEX=" + (index ? index : "(unset)") + ")";
  if (which == "size1mb") {
    sizeOneMiB(ctx);
  } else if (which == "index") {
    index2035(ctx);
  } else {
    colltest::fatal("unknown --env case " + which);
  }
}

}  // namespace fusiontest
