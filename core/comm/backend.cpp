#include "core/comm/backend.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/comm/comm.h"
#include "core/comm/comm_channel.h"
#include "core/common/error.h"
#include "core/common/log.h"
#include "core/plugins/host_memory.h"
#include "core/plugins/registry.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {

// What each rank contributes to the setup exchange.
struct SetupRecord {
  int32_t ok;
  unsigned char address[WEFT_BACKEND_ADDRESS_BYTES];
};

// The first loaded plugin that offers backend calls and reaches every rank, or null. A backend that reaches
// only its own host (shm) can serve only a communicator on one host; one that reaches any (mpi), every
// communicator.
const LoadedPlugin* backendPlugin(bool oneHost) {
  const auto& plugins = loadedTransports();
  auto it = std::find_if(plugins.begin(), plugins.end(), [&](const LoadedPlugin& p) {
    return p.plugin->backend && (oneHost || p.props.reach == weftReachAny);
  });
  return it != plugins.end() ? &*it : nullptr;
}

bool allOnOneHost(const weftComm& comm) {
  return std::all_of(comm.peers.begin(), comm.peers.end(),
                     [&](const PeerInfo& p) { return p.hostId == comm.peers.front().hostId; });
}

// Every rank's record, through the communicator's own AllGather.
std::vector<SetupRecord> exchange(weftComm& comm, const SetupRecord& mine) {
  return allGatherRecords(comm, mine, "backend setup");
}

bool everyoneOk(const std::vector<SetupRecord>& all) {
  return std::all_of(all.begin(), all.end(), [](const SetupRecord& r) { return r.ok == 1; });
}

void reduceKernel(void* dst, const void* a, const void* b, size_t count, weftDataType_t type, weftRedOp_t op) {
  reduce(dst, a, b, count, type, op);
}

// One call as the plugin ABI describes it.
weftBackendOp_v1 opOf(weftCollType_t coll, const CollArgs& args) {
  return {coll, args.sendbuff, args.recvbuff, args.count, args.type, args.op, args.root};
}

}  // namespace

std::unique_ptr<Backend> Backend::setUp(weftComm& comm) {
  if (comm.nranks < 2) return nullptr;
  // Each rank offers what its own plugins allow; the exchange below makes the answer the same everywhere.
  const bool oneHost = allOnOneHost(comm);
  const LoadedPlugin* plugin = backendPlugin(oneHost);
  const weftBackendOps_v1* ops = plugin != nullptr ? plugin->plugin->backend : nullptr;
  weftBackendComm_v1 info{};
  info.rank = comm.rank;
  info.nranks = comm.nranks;
  info.timeoutSeconds = static_cast<double>(comm.timeout.count());
  info.reduce = reduceKernel;
  auto watch = std::make_unique<BackendWatch>(comm);
  info.aborted = BackendWatch::aborted;
  info.hostComm = watch.get();

  SetupRecord mine{};
  void* bcomm = nullptr;
  if (ops != nullptr && ops->commPrepare(plugin->context, &info, mine.address, &bcomm) == weftSuccess) mine.ok = 1;
  std::unique_ptr<Backend> backend;
  if (mine.ok == 1) backend = std::make_unique<Backend>(*plugin, bcomm, std::move(watch));
  std::vector<SetupRecord> all = exchange(comm, mine);
  if (!everyoneOk(all)) {
    log::debug("collective backend not used: not every rank could prepare one");
    return nullptr;
  }
  // Everyone prepared: connect, then agree again (connecting can fail on one rank only).
  std::vector<unsigned char> addresses(all.size() * WEFT_BACKEND_ADDRESS_BYTES);
  for (size_t r = 0; r < all.size(); ++r) {
    std::memcpy(&addresses[r * WEFT_BACKEND_ADDRESS_BYTES], all[r].address, WEFT_BACKEND_ADDRESS_BYTES);
  }
  SetupRecord connected{};
  if (ops->commConnect(bcomm, addresses.data()) == weftSuccess) {
    connected.ok = 1;
  } else {
    log::info("collective backend {} not used: {}", plugin->name, ops->lastError(bcomm));
  }
  if (!everyoneOk(exchange(comm, connected))) return nullptr;
  log::info("collectives among the {} ranks{} run in the {} plugin's backend", comm.nranks,
            oneHost ? " of this host" : "", plugin->name);
  return backend;
}

Backend::~Backend() { plugin_.plugin->backend->commDestroy(bcomm_); }

const char* Backend::name() const { return plugin_.name.c_str(); }

bool Backend::prefersHostMemory(weftCollType_t coll, const CollArgs& args) const {
  if (!makesHostMemory(plugin_)) return false;
  const weftBackendAdviceOps_v1* advice = plugin_.backendAdvice;
  const weftBackendOp_v1 op = opOf(coll, args);
  return advice == nullptr || advice->prefersPluginMemory(bcomm_, &op) != 0;
}

template <typename Call>
void Backend::call(const char* operation, Call&& call) {
  watch_->begin(operation, plugin_.name.c_str());
  weftResult_t r = call();
  if (r == weftSuccess) return;
  watch_->throwIfFault();
  fail(r, "{} ({} backend): {}", operation, plugin_.name, plugin_.plugin->backend->lastError(bcomm_));
}

bool Backend::run(weftCollType_t coll, const CollArgs& args, const char* operation) {
  const weftBackendOps_v1* ops = plugin_.plugin->backend;
  const weftBackendOp_v1 op = opOf(coll, args);
  if (ops->supports(bcomm_, &op) == 0) return false;
  call(operation, [&] { return ops->run(bcomm_, &op); });
  return true;
}

bool Backend::runFromCopy(weftCollType_t coll, const CollArgs& args, const char* operation) {
  const weftBackendCopiedInputOps_v1* copied = plugin_.backendCopiedInput;
  if (copied == nullptr) return false;
  const weftBackendOp_v1 op = opOf(coll, args);
  if (plugin_.plugin->backend->supports(bcomm_, &op) == 0) return false;
  call(operation, [&] { return copied->runFromCopy(bcomm_, &op); });
  return true;
}

bool Backend::runList(weftCollType_t coll, const CollArgs& total, std::span<const weftBackendBuffer_v1> buffers,
                      const char* operation) {
  const weftBackendListOps_v1* list = plugin_.backendList;
  if (list == nullptr) return false;
  weftBackendOp_v1 op{coll, nullptr, nullptr, total.count, total.type, total.op, total.root};
  if (list->supportsList(bcomm_, &op) == 0) return false;
  call(operation, [&] { return list->runList(bcomm_, &op, buffers.data(), buffers.size()); });
  return true;
}

bool Backend::supportsList(weftCollType_t coll, const CollArgs& total) const {
  const weftBackendListOps_v1* list = plugin_.backendList;
  weftBackendOp_v1 op{coll, nullptr, nullptr, total.count, total.type, total.op, total.root};
  return list != nullptr && list->supportsList(bcomm_, &op) != 0;
}

bool Backend::runMany(std::span<const weftBackendOp_v1> ops, const char* operation) {
  const weftBackendListOps_v1* list = plugin_.backendList;
  if (list == nullptr || list->runMany == nullptr) return false;
  for (const weftBackendOp_v1& op : ops) {
    if (plugin_.plugin->backend->supports(bcomm_, &op) == 0) return false;
  }
  call(operation, [&] { return list->runMany(bcomm_, ops.data(), ops.size()); });
  return true;
}

}  // namespace weft
