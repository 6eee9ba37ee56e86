#include "mpi_backend.h"

#include <sys/random.h>

#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mpi_log.h"
#include "mpi_types.h"

namespace weft::mpi {
namespace {

uint64_t randomNonce() {
  uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof(nonce), 0) != static_cast<ssize_t>(sizeof(nonce))) {
    nonce = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
            reinterpret_cast<uintptr_t>(&nonce);
  }
  return nonce;
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

BackendComm::BackendComm(Context* ctx, const weftBackendComm_v1& info) : ctx_(ctx), info_(info) {
  mine_.magic = kAddressMagic;
  mine_.world = WorldId{ctx->jobId(), ctx->worldSize(), ctx->worldRank()};
  mine_.nonce = randomNonce();
}

BackendComm::~BackendComm() {
  if (info_.rank == 0 && comm_ != MPI_COMM_NULL) {
    logf(ctx_->host(), weftLogInfo, "%llu collectives of this %d-rank communicator ran through MPI",
         collectivesRun_, info_.nranks);
  }
  // MPI_Comm_free is local in practice; after an abandoned wait the communicator is left to MPI_Finalize.
  if (comm_ != MPI_COMM_NULL && !abandoned_ && Context::mpiUsable()) {
    auto mpi = ctx_->mpiLock();
    MPI_Comm_free(&comm_);
  }
}

void BackendComm::address(unsigned char* out) const {
  std::memset(out, 0, WEFT_BACKEND_ADDRESS_BYTES);
  std::memcpy(out, &mine_, sizeof(mine_));
}

weftResult_t BackendComm::fail(weftResult_t code, std::string message) {
  error_ = std::move(message);
  return code;
}

weftResult_t BackendComm::mpiFailed(const char* call, int rc) {
  return fail(weftSystemError, mpiFailure(call, rc));
}

weftResult_t BackendComm::connect(const unsigned char* addresses) {
  const int n = info_.nranks;
  std::vector<int> worldRanks(static_cast<size_t>(n));
  std::set<int> seen;
  uint64_t nonces = 0xcbf29ce484222325ULL;
  // Every rank sees the same addresses and decides alike: a mismatch fails everywhere before any MPI
  // collective is called, so nothing hangs.
  for (int r = 0; r < n; ++r) {
    BackendAddress a{};
    std::memcpy(&a, addresses + static_cast<size_t>(r) * WEFT_BACKEND_ADDRESS_BYTES, sizeof(a));
    if (a.magic != kAddressMagic)
      return fail(weftInvalidUsage, "rank " + std::to_string(r) + " sent no mpi address");
    if (a.world.jobId != mine_.world.jobId || a.world.worldSize != mine_.world.worldSize) {
      return fail(weftInvalidUsage, "rank " + std::to_string(r) + " is in MPI job " + hex(a.world.jobId) +
                                        " (world of " + std::to_string(a.world.worldSize) + "), rank " +
                                        std::to_string(info_.rank) + " in job " + hex(mine_.world.jobId) +
                                        " (world of " + std::to_string(mine_.world.worldSize) +
                                        "): the ranks are not all in one MPI world (separate mpirun jobs?)");
    }
    if (a.world.worldRank < 0 || a.world.worldRank >= a.world.worldSize ||
        !seen.insert(a.world.worldRank).second) {
      return fail(weftInvalidUsage, "rank " + std::to_string(r) + " claims MPI_COMM_WORLD rank " +
                                        std::to_string(a.world.worldRank) +
                                        ", which another rank has or which does not exist: the ranks are not "
                                        "all in one MPI world (started without mpirun?)");
    }
    worldRanks[static_cast<size_t>(r)] = a.world.worldRank;
    nonces = (nonces ^ a.nonce) * 0x100000001b3ULL;
  }
  // MPI_Comm_create_group's tag tells apart concurrent creations among the same processes; it comes from
  // every rank's nonce, so it is equal on all ranks and differs between communicators. It stays in the
  // quarter of the tag space below the transport's, which the plugin also reserves (README.md).
  void* value = nullptr;
  int flag = 0;
  int tagUpperBound = 32767;
  if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag) == MPI_SUCCESS && flag != 0) {
    tagUpperBound = *static_cast<int*>(value);
  }
  const int quarter = tagUpperBound / 4;
  const int tag = quarter + static_cast<int>(nonces % static_cast<uint64_t>(quarter));

  auto mpi = ctx_->mpiLock();
  setUpTypes(info_.reduce);
  MPI_Group world = MPI_GROUP_NULL;
  MPI_Group group = MPI_GROUP_NULL;
  int rc = MPI_Comm_group(MPI_COMM_WORLD, &world);
  if (rc == MPI_SUCCESS) rc = MPI_Group_incl(world, n, worldRanks.data(), &group);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm_);
  if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
  if (world != MPI_GROUP_NULL) MPI_Group_free(&world);
  if (rc != MPI_SUCCESS) return mpiFailed("MPI_Comm_create_group", rc);
  // Errors come back as codes that run() turns into Weft errors, instead of aborting the job.
  if (rc = MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN); rc != MPI_SUCCESS) {
    return mpiFailed("MPI_Comm_set_errhandler", rc);
  }
  int mpiRank = -1;
  MPI_Comm_rank(comm_, &mpiRank);
  if (mpiRank != info_.rank) {
    return fail(weftInternalError,
                "MPI gave rank " + std::to_string(mpiRank) + " for Weft rank " + std::to_string(info_.rank));
  }
  if (mpi.owns_lock()) mpi.unlock();  // empty when MPI is MPI_THREAD_MULTIPLE
  if (info_.rank == 0) {
    std::string ranks;
    for (int w : worldRanks) {
      if (!ranks.empty()) ranks += ',';
      ranks += std::to_string(w);
    }
    logf(ctx_->host(), weftLogInfo,
         "collectives of a %d-rank communicator run through MPI (MPI_COMM_WORLD ranks %s)", n, ranks.c_str());
  }
  return weftSuccess;
}

weftResult_t BackendComm::wait(MPI_Request* request, const char* call) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  for (unsigned polls = 0;; ++polls) {
    int done = 0;
    int rc;
    {
      auto mpi = ctx_->mpiLock();
      rc = MPI_Test(request, &done, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) return mpiFailed(call, rc);
    if (done != 0) return weftSuccess;
    if (info_.aborted != nullptr && info_.aborted(info_.hostComm) != 0) {
      abandoned_ = true;
      return fail(weftInvalidUsage, std::string(call) + ": the communicator was aborted while waiting");
    }
    if ((polls & 255U) == 0 && info_.timeoutSeconds > 0 &&
        std::chrono::duration<double>(Clock::now() - start).count() > info_.timeoutSeconds) {
      abandoned_ = true;
      return fail(weftTimeout, std::string(call) + ": not complete after " + std::to_string(info_.timeoutSeconds) +
                                   " s (WEFT_TIMEOUT); a rank of the communicator did not take part");
    }
    // Spin while an answer is likely microseconds away, then let other processes run: ranks often
    // outnumber cores, and MPI only progresses inside our MPI_Test calls.
    if (polls > 2000) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    } else if (polls > 200) {
      std::this_thread::yield();
    }
  }
}

weftResult_t BackendComm::run(const weftBackendOp_v1& op) {
  if (abandoned_) {
    return fail(weftInvalidUsage,
                "an earlier collective was abandoned (abort or timeout): MPI cannot cancel it, "
                "so this communicator cannot run more");
  }
  if (comm_ == MPI_COMM_NULL) return fail(weftInvalidUsage, "run before a successful commConnect");
  weftResult_t r = weftSuccess;
  switch (op.coll) {
    case weftCollAllReduce:
      r = allReduce(op);
      break;
    case weftCollBroadcast:
      r = broadcast(op);
      break;
    case weftCollReduce:
      r = reduce(op);
      break;
    case weftCollAllGather:
      r = allGather(op);
      break;
    case weftCollReduceScatter:
      r = reduceScatter(op);
      break;
    case weftCollAllToAll:
      r = allToAll(op);
      break;
    case weftCollBarrier:
      r = call("MPI_Ibarrier", [&](MPI_Request* q) { return MPI_Ibarrier(comm_, q); });
      break;
    default:
      return fail(weftInvalidArgument,
                  "collective " + std::to_string(static_cast<int>(op.coll)) + " not supported");
  }
  if (r == weftSuccess) ++collectivesRun_;
  return r;
}

}  // namespace weft::mpi
