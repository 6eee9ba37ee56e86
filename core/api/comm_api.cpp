// Communicator entry points of the C ABI.
#include <cstdlib>
#include <functional>
#include <string>

#include "core/api/guard.h"
#include "core/bootstrap/bootstrap.h"
#include "core/bootstrap/unique_id.h"
#include "core/comm/comm.h"
#include "core/comm/create.h"
#include "core/comm/ordering.h"
#include "core/common/config.h"
#include "core/common/log.h"

namespace weft {
namespace {

void requireRankInRange(int nranks, int rank) {
  if (nranks < 1) fail(weftInvalidArgument, "nranks {} must be at least 1", nranks);
  if (rank < 0 || rank >= nranks) fail(weftInvalidArgument, "rank {} is out of range for nranks {}", rank, nranks);
}

int envInt(const char* primary, const char* fallback) {
  auto text = config::get(primary);
  const char* name = primary;
  if (!text) {
    text = config::get(fallback);
    name = fallback;
  }
  if (!text) fail(weftInvalidArgument, "neither {} nor {} is set", primary, fallback);
  char* end = nullptr;
  long value = std::strtol(text->c_str(), &end, 10);
  if (text->empty() || *end != '\0') fail(weftInvalidArgument, "{}='{}' is not an integer", name, *text);
  return static_cast<int>(value);
}

// Without WEFT_TOKEN every rank must still agree: derive it from the root address (FNV-1a). Documented as
// not secret.
uint64_t tokenFromEnv(const std::string& root) {
  if (auto text = config::get("WEFT_TOKEN")) {
    char* end = nullptr;
    uint64_t token = std::strtoull(text->c_str(), &end, 16);
    if (text->size() != 16 || *end != '\0') fail(weftInvalidArgument, "WEFT_TOKEN must be 16 hex digits");
    return token;
  }
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : root) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

}  // namespace
}  // namespace weft

using namespace weft;

extern "C" {

WEFT_API weftResult_t weftGetUniqueId(weftUniqueId* uniqueId) {
  return guarded(__func__, [&] {
    requireNotNull(uniqueId, "uniqueId");
    UniqueIdContent content;
    content.token = randomToken();
    content.root = chooseBootstrapAddress();
    Socket listener = listenOn(content.root, 1024);
    startBootstrapRoot(std::move(listener), content.token);
    *uniqueId = encodeUniqueId(content);
  });
}

WEFT_API weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, weftUniqueId commId, int rank) {
  return guarded(__func__, [&] {
    requireNotNull(comm, "comm");
    *comm = nullptr;
    requireRankInRange(nranks, rank);
    *comm = createComm(nranks, rank, decodeUniqueId(commId));
  });
}

WEFT_API weftResult_t weftCommInitFromEnv(weftComm_t* comm) {
  return guarded(__func__, [&] {
    requireNotNull(comm, "comm");
    *comm = nullptr;
    int rank = envInt("WEFT_RANK", "OMPI_COMM_WORLD_RANK");
    int nranks = envInt("WEFT_SIZE", "OMPI_COMM_WORLD_SIZE");
    requireRankInRange(nranks, rank);
    auto root = config::get("WEFT_ROOT");
    if (!root) fail(weftInvalidArgument, "WEFT_ROOT (host:port of rank 0's bootstrap) is not set");
    UniqueIdContent id{tokenFromEnv(*root), parseSocketAddress(*root)};
    if (reinterpret_cast<const sockaddr_in*>(&id.root.storage)->sin_port == 0) {
      fail(weftInvalidArgument, "WEFT_ROOT='{}' needs a port other ranks can reach, not 0", *root);
    }
    if (rank == 0) {
      SocketAddress address = id.root;
      startBootstrapRoot(listenOn(address, 1024), id.token);
    }
    *comm = createComm(nranks, rank, id);
  });
}

WEFT_API weftResult_t weftCommSplit(weftComm_t comm, int color, int key, weftComm_t* newcomm) {
  return guarded(__func__, [&] {
    requireNotNull(newcomm, "newcomm");
    *newcomm = nullptr;
    requireComm(comm);
    if (color < 0 && color != WEFT_SPLIT_NOCOLOR) {
      fail(weftInvalidArgument, "color {} must be >= 0 or WEFT_SPLIT_NOCOLOR", color);
    }
    *newcomm = splitComm(comm, color, key);
  });
}

WEFT_API weftResult_t weftCommCount(const weftComm_t comm, int* count) {
  return guarded(__func__, [&] {
    requireComm(comm);
    requireNotNull(count, "count");
    *count = comm->nranks;
  });
}

WEFT_API weftResult_t weftCommUserRank(const weftComm_t comm, int* rank) {
  return guarded(__func__, [&] {
    requireComm(comm);
    requireNotNull(rank, "rank");
    *rank = comm->rank;
  });
}

WEFT_API weftResult_t weftCommDestroy(weftComm_t comm) {
  return guarded(__func__, [&] {
    requireComm(comm);
    waitIdle(comm);  // operations queued on streams still use it
    comm->plans.detachAll();
    comm->magic = 0;
    delete comm;
  });
}

WEFT_API weftResult_t weftCommAbort(weftComm_t comm) {
  return guarded(__func__, [&] {
    requireComm(comm);
    // Running and queued operations see the flag and fail at once; then nothing uses the communicator.
    // An abort that is the communicator's first failure is news to the peers, which may be waiting on
    // this rank: they are told once no operation uses the connections any more.
    bool first = comm->setError(weftInvalidUsage, "the communicator was aborted");
    comm->aborted = true;
    waitIdle(comm);
    if (first && comm->control) {
      comm->control->announceFault(weftRemoteError, fmt::format("rank {} aborted the communicator", comm->rank));
    }
    comm->plans.detachAll();
    comm->magic = 0;
    delete comm;
  });
}

WEFT_API weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError) {
  return guarded(__func__, [&] {
    requireComm(comm);
    requireNotNull(asyncError, "asyncError");
    std::lock_guard lock(comm->errorMutex);
    *asyncError = comm->asyncError;
  });
}

}  // extern "C"
