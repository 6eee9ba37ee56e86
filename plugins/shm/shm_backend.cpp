// The C ABI boundary of the node backend (shm_node.h): argument checks, and no exception escapes.
#include <memory>

#include "common/transport_boundary.h"
#include "shm_context.h"
#include "shm_log.h"
#include "shm_node.h"

namespace weft::shm {
namespace {

weftResult_t nodePrepare(void* ctx, const weftBackendComm_v1* info, void* address, void** bcomm) {
  if (ctx == nullptr || info == nullptr || address == nullptr || bcomm == nullptr) return weftInvalidArgument;
  *bcomm = nullptr;
  auto* c = static_cast<Context*>(ctx);
  if (info->reduce == nullptr || info->nranks < 1 || info->rank < 0 || info->rank >= info->nranks) {
    logf(c->host(), weftLogError, "commPrepare: rank %d of %d, reduce %s", info->rank, info->nranks,
         info->reduce == nullptr ? "missing" : "given");
    return weftInvalidArgument;
  }
  if (!c->settings().nodeCollectives) {
    logf(c->host(), weftLogDebug, "node collectives off (WEFT_SHM_COLL=0)");
    return weftInvalidUsage;
  }
  return plugins::guarded(logf, c->host(), "commPrepare", [&]() -> weftResult_t {
    try {
      auto node = std::make_unique<NodeComm>(c, *info);
      node->address(address);
      *bcomm = node.release();
      return weftSuccess;
    } catch (const NodeError& e) {
      logf(c->host(), weftLogWarn, "node collectives off: %s", e.message.c_str());
      return e.code;
    }
  });
}

weftResult_t nodeConnect(void* bcomm, const void* addresses) {
  if (bcomm == nullptr || addresses == nullptr) return weftInvalidArgument;
  auto* node = static_cast<NodeComm*>(bcomm);
  return plugins::guarded(logf, nullptr, "commConnect", [&] {
    return node->connect(static_cast<const unsigned char*>(addresses)) ? weftSuccess : weftSystemError;
  });
}

weftResult_t nodeDestroy(void* bcomm) {
  delete static_cast<NodeComm*>(bcomm);
  return weftSuccess;
}

int nodeSupports(void* bcomm, const weftBackendOp_v1* op) {
  if (bcomm == nullptr || op == nullptr) return 0;
  return static_cast<NodeComm*>(bcomm)->supports(*op) ? 1 : 0;
}

weftResult_t nodeRun(void* bcomm, const weftBackendOp_v1* op) {
  if (bcomm == nullptr || op == nullptr) return weftInvalidArgument;
  auto* node = static_cast<NodeComm*>(bcomm);
  return plugins::guarded(logf, nullptr, "run", [&] { return node->run(*op); });
}

weftResult_t nodeRunFromCopy(void* bcomm, const weftBackendOp_v1* op) {
  if (bcomm == nullptr || op == nullptr) return weftInvalidArgument;
  auto* node = static_cast<NodeComm*>(bcomm);
  return plugins::guarded(logf, nullptr, "runFromCopy", [&] { return node->runFromCopy(*op); });
}

int nodeSupportsList(void* bcomm, const weftBackendOp_v1* op) {
  if (bcomm == nullptr || op == nullptr) return 0;
  return static_cast<NodeComm*>(bcomm)->supportsList(*op) ? 1 : 0;
}

weftResult_t nodeRunList(void* bcomm, const weftBackendOp_v1* op, const weftBackendBuffer_v1* buffers,
                         size_t numBuffers) {
  if (bcomm == nullptr || op == nullptr || (buffers == nullptr && numBuffers > 0)) return weftInvalidArgument;
  auto* node = static_cast<NodeComm*>(bcomm);
  return plugins::guarded(logf, nullptr, "runList", [&] { return node->runList(*op, buffers, numBuffers); });
}

weftResult_t nodeRunMany(void* bcomm, const weftBackendOp_v1* ops, size_t numOps) {
  if (bcomm == nullptr || (ops == nullptr && numOps > 0)) return weftInvalidArgument;
  auto* node = static_cast<NodeComm*>(bcomm);
  return plugins::guarded(logf, nullptr, "runMany", [&] { return node->runMany(ops, numOps); });
}

int nodePrefersPluginMemory(void* bcomm, const weftBackendOp_v1* op) {
  if (bcomm == nullptr || op == nullptr) return 1;
  return static_cast<NodeComm*>(bcomm)->prefersPluginMemory(*op) ? 1 : 0;
}

const char* nodeLastError(void* bcomm) {
  return bcomm == nullptr ? "no backend communicator" : static_cast<NodeComm*>(bcomm)->lastError();
}

}  // namespace

const weftBackendOps_v1 kNodeBackendOps = {
    .commPrepare = nodePrepare,
    .commConnect = nodeConnect,
    .commDestroy = nodeDestroy,
    .supports = nodeSupports,
    .run = nodeRun,
    .lastError = nodeLastError,
};

}  // namespace weft::shm

// The list extension, exported next to the plugin table (WEFT_BACKEND_LIST_SYMBOL_V1).
extern "C" {
extern WEFT_API const weftBackendListOps_v1 weftBackendList_v1;
}

const weftBackendListOps_v1 weftBackendList_v1 = {
    .abiVersion = 1,
    .supportsList = weft::shm::nodeSupportsList,
    .runList = weft::shm::nodeRunList,
    .runMany = weft::shm::nodeRunMany,
};

// The advice extension (WEFT_BACKEND_ADVICE_SYMBOL_V1): copying into our memory first (Weft's bounce) pays
// except where CMA measured cheap (NodeComm::prefersPluginMemory()).
extern "C" {
extern WEFT_API const weftBackendAdviceOps_v1 weftBackendAdvice_v1;
}

const weftBackendAdviceOps_v1 weftBackendAdvice_v1 = {
    .abiVersion = 1,
    .prefersPluginMemory = weft::shm::nodePrefersPluginMemory,
};

// The copied-input extension (WEFT_BACKEND_COPIED_INPUT_SYMBOL_V1): Weft's in-place AllGathers from a copy in our
// memory leave this rank's block alone (NodeComm::runFromCopy()).
extern "C" {
extern WEFT_API const weftBackendCopiedInputOps_v1 weftBackendCopiedInput_v1;
}

const weftBackendCopiedInputOps_v1 weftBackendCopiedInput_v1 = {
    .abiVersion = 1,
    .runFromCopy = weft::shm::nodeRunFromCopy,
};
