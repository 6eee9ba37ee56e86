#include "core/comm/create.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "core/algorithms/algorithms.h"
#include "core/bootstrap/bootstrap.h"
#include "core/comm/comm.h"
#include "core/comm/comm_channel.h"
#include "core/comm/idle_wait.h"
#include "core/comm/ordering.h"
#include "core/common/config.h"
#include "core/common/error.h"
#include "core/common/log.h"
#include "core/plugins/registry.h"
#include "topology/cpu_binding.h"
#include "topology/host.h"

namespace weft {
namespace {

// A communicator that listens on every transport but knows no peers yet.
std::unique_ptr<weftComm> prepare(uint64_t token, int rank, int nranks) {
  Tuner tuner = Tuner::fromConfig();  // a bad WEFT_ALGO fails here, before any peer waits on us
  auto comm = std::make_unique<weftComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->token = token;
  comm->tuner = tuner;
  comm->timeout = std::chrono::seconds(config::getInt("WEFT_TIMEOUT", 600));  // read once: not per call
  comm->stallWarn = std::chrono::seconds(config::getInt("WEFT_STALL_WARN", 60));
  comm->checkCalls = config::getInt("WEFT_CHECK", 0) != 0;
  comm->hostId = hostIdentity();
  comm->connections = std::make_unique<Connections>(token, loadedTransports());
  return comm;
}

PeerInfo describe(const weftComm& comm) {
  return {comm.hostId, static_cast<int>(getpid()), comm.connections->handles(), topology::usableCpuMask()};
}

// What the tuner weighs: how the ranks sit on hosts and which transports join them.
TuneShape shapeOf(const weftComm& comm) {
  TuneShape shape;
  shape.nranks = comm.nranks;
  shape.numHosts = comm.hosts.numHosts();
  for (int h = 0; h < shape.numHosts; ++h)
    shape.ranksPerHost = std::max(shape.ranksPerHost, static_cast<int>(comm.hosts.ranksOn(h).size()));
  // Every rank must choose alike, so the transports are those of the same pairs of ranks everywhere: the
  // first two ranks of the first host that has two, and the first ranks of the first two hosts.
  auto between = [&](int a, int b) { return comm.connections->transportBetween(comm.peers[a], comm.peers[b]); };
  for (int h = 0; h < shape.numHosts && shape.intraTransport.empty(); ++h) {
    const std::vector<int>& ranks = comm.hosts.ranksOn(h);
    if (ranks.size() > 1) shape.intraTransport = between(ranks[0], ranks[1]);
  }
  if (shape.numHosts > 1) shape.interTransport = between(comm.hosts.ranksOn(0)[0], comm.hosts.ranksOn(1)[0]);
  return shape;
}

void finish(weftComm& comm, std::vector<PeerInfo> peers) {
  comm.peers = std::move(peers);
  comm.connections->setPeers(comm.peers, comm.rank, comm.hostId);
  std::vector<std::string> hostIds;
  for (const PeerInfo& peer : comm.peers) hostIds.push_back(peer.hostId);
  comm.hosts = HostLayout::fromHostIds(hostIds);
  comm.tuner.setShape(shapeOf(comm));
  comm.linksCopyOnce = comm.connections->sameHostOnlyTransport(comm.tuner.shape().intraTransport);
  // Whether the ranks of this host outnumber the CPUs they may run on between them: each rank's own mask
  // alone would take ranks bound to a core each (mpirun's default at 2 ranks) for ranks sharing one.
  const std::vector<int>& hostRanks = comm.hosts.ranksOn(comm.hosts.hostOf(comm.rank));
  std::vector<const std::vector<uint64_t>*> masks;
  masks.reserve(hostRanks.size());
  for (int r : hostRanks) masks.push_back(&comm.peers[r].cpuMask);
  comm.hostCpus = topology::cpusCovered(masks);
  comm.hostCpusShared = comm.hostCpus > 0 && hostRanks.size() > comm.hostCpus;
  comm.spinRounds = waitSpinRounds(comm.hostCpusShared);
  comm.sentTo.assign(comm.nranks, 0);
  comm.receivedFrom.assign(comm.nranks, 0);
  comm.control = std::make_unique<ControlChannel>(comm);
  const std::string cpus = comm.hostCpus > 0 ? std::to_string(comm.hostCpus) : "unknown";
  log::info("communicator ready: rank {} of {} ({} hosts; {} ranks on {} CPUs here{})", comm.rank, comm.nranks,
            comm.hosts.numHosts(), hostRanks.size(), cpus,
            comm.hostCpusShared ? ": waits give the CPU away early" : "");
}

// Split exchanges fixed-size records through the parent's AllGather.
constexpr size_t kSplitBlobBytes = 2048;
struct SplitRecord {
  int32_t color;
  int32_t key;
  uint32_t blobBytes;
  unsigned char blob[kSplitBlobBytes];
};

}  // namespace

weftComm* createComm(int nranks, int rank, const UniqueIdContent& id) {
  log::setRank(rank);
  auto comm = prepare(id.token, rank, nranks);
  std::vector<Blob> blobs = bootstrapExchange(id.root, id.token, nranks, rank, encodePeerInfo(describe(*comm)));
  waitForLocalBootstrapRoot(id.token);
  std::vector<PeerInfo> peers(blobs.size());
  std::transform(blobs.begin(), blobs.end(), peers.begin(), decodePeerInfo);
  finish(*comm, std::move(peers));
  return comm.release();
}

weftComm* splitComm(weftComm* parent, int color, int key) {
  std::unique_ptr<weftComm> child;
  SplitRecord mine{};
  mine.color = color;
  mine.key = key;
  if (color != WEFT_SPLIT_NOCOLOR) {
    child = prepare(parent->token, -1, -1);
    Blob blob = encodePeerInfo(describe(*child));
    if (blob.size() > kSplitBlobBytes)
      fail(weftInternalError, "peer description of {} bytes is too large", blob.size());
    mine.blobBytes = static_cast<uint32_t>(blob.size());
    std::memcpy(mine.blob, blob.data(), blob.size());
  }
  // The split is an operation of the parent: it takes its turn like any collective.
  std::vector<SplitRecord> all;
  std::vector<Ticket> tickets = issueTickets({parent});
  {
    struct Release {
      const std::vector<Ticket>& t;
      ~Release() { finishTurns(t); }
    } release{tickets};
    waitTurns(tickets);
    parent->throwIfFailed();
    try {
      all = allGatherRecords(*parent, mine, "weftCommSplit");  // one rank: the ring copies its own record
    } catch (const Error& e) {
      parent->failAndTell(e.code(), e.what());
      throw;
    }
  }
  if (color == WEFT_SPLIT_NOCOLOR) return nullptr;
  // Members in (key, parent rank) order.
  std::vector<int> members;
  for (int r = 0; r < parent->nranks; ++r) {
    if (all[r].color == color) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return all[a].key < all[b].key; });
  std::vector<PeerInfo> peers;
  for (size_t i = 0; i < members.size(); ++i) {
    const SplitRecord& record = all[members[i]];
    if (record.blobBytes > kSplitBlobBytes)
      fail(weftRemoteError, "split record of rank {} is malformed", members[i]);
    peers.push_back(decodePeerInfo(Blob(record.blob, record.blob + record.blobBytes)));
    if (members[i] == parent->rank) child->rank = static_cast<int>(i);
  }
  child->nranks = static_cast<int>(members.size());
  finish(*child, std::move(peers));
  return child.release();
}

}  // namespace weft
