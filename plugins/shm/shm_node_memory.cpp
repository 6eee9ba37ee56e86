// The node backend's part in weftMemAlloc buffers (shm_memory.h): the table of this rank's buffers that
// its direct collectives use, and the peers' listed buffers mapped here; and readPeer, writePeer and their
// list forms, which copy with memcpy through those mappings and by CMA elsewhere.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/copy_bytes.h"
#include "shm_cma.h"
#include "shm_log.h"
#include "shm_node.h"
#include "shm_socket.h"

namespace weft::shm {

bool NodeComm::prepareTable() {
  if (tableReleases_ != sharedReleases()) {
    // Read the count before looking: a buffer freed meanwhile is seen at the next collective.
    tableReleases_ = sharedReleases();
    NodeControl* table = mine();
    for (size_t i = 0; i < table->regionCount;) {
      if (sharedRegionLive(table->regions[i])) {
        ++i;
        continue;
      }
      const size_t last = --table->regionCount;  // the last entry takes the freed one's place
      table->regions[i] = table->regions[last];
      tableUse_[i] = tableUse_[last];
    }
  }
  return anySharedRegions();
}

void NodeComm::shareBuffers(const weftBackendOp_v1& op) {
  if (!prepareTable()) return;
  const size_t one = op.count * plugin::elementBytes(op.datatype);
  const size_t all = one * static_cast<size_t>(nranks_);
  const bool blocksIn = op.coll == weftCollReduceScatter || op.coll == weftCollAllToAll;
  const bool blocksOut = op.coll == weftCollAllGather || op.coll == weftCollAllToAll;
  const size_t sendBytes = blocksIn ? all : one;
  if (sendBytes <= stageLimit(op.coll)) return;  // staged: no peer touches our buffers
  shareBuffer(op.sendbuff, sendBytes);
  shareBuffer(op.recvbuff, blocksOut ? all : one);
}

void NodeComm::shareList(const weftBackendBuffer_v1* buffers, size_t numBuffers, size_t elementBytes) {
  if (!prepareTable()) return;
  for (size_t i = 0; i < numBuffers; ++i) {
    shareBuffer(buffers[i].sendbuff, buffers[i].count * elementBytes);
    if (buffers[i].recvbuff != buffers[i].sendbuff)
      shareBuffer(buffers[i].recvbuff, buffers[i].count * elementBytes);
  }
}

void NodeComm::shareBuffer(const void* buffer, size_t bytes) {
  if (buffer == nullptr || bytes == 0) return;
  SharedRegion* table = mine()->regions;
  const auto address = reinterpret_cast<uint64_t>(buffer);
  // Listed already (the table holds live buffers only, see prepareTable): no registry lookup, which a list
  // of thousands of buffers in one allocation would pay for each.
  if (const SharedRegion* listed = listedRegion(rank_, address, bytes)) {
    tableUse_[listed - table] = ++tableClock_;
    return;
  }
  SharedRegion region{};
  if (!findSharedRegion(address, bytes, &region)) return;
  NodeControl* control = mine();
  size_t slot = control->regionCount;  // a new entry, or the least recently used one's place when full
  if (slot == kSharedRegionSlots) {
    slot = static_cast<size_t>(std::min_element(tableUse_, tableUse_ + kSharedRegionSlots) - tableUse_);
  } else {
    ++control->regionCount;
  }
  control->regions[slot] = region;
  tableUse_[slot] = ++tableClock_;
}

const SharedRegion* NodeComm::listedRegion(int rank, uint64_t address, size_t bytes) const {
  for (const SharedRegion& r : tableOf(rank)) {
    if (r.bytes != 0 && address >= r.base && address - r.base <= r.bytes &&
        bytes <= r.bytes - (address - r.base)) {
      return &r;
    }
  }
  return nullptr;
}

unsigned char* NodeComm::peerMemory(int peer, uint64_t address, size_t bytes) {
  Peer& p = peers_[peer];
  const SharedRegion* listed = listedRegion(peer, address, bytes);
  if (listed == nullptr) return nullptr;
  const SharedRegion region = *listed;
  auto sameRegion = [&](const PeerRegion& known) {
    return known.region.base == region.base && known.region.bytes == region.bytes &&
           known.region.inode == region.inode;
  };
  auto known = std::find_if(p.regions.begin(), p.regions.end(), sameRegion);
  if (known == p.regions.end()) {
    // Unmap what the peer no longer lists (freed, or out of its table): a mapping keeps a freed buffer's
    // memory in use.
    const std::span<const SharedRegion> table = tableOf(peer);
    std::erase_if(p.regions, [&](const PeerRegion& mapped) {
      return std::none_of(table.begin(), table.end(), [&](const SharedRegion& r) {
        return r.base == mapped.region.base && r.inode == mapped.region.inode;
      });
    });
    known = p.regions.insert(p.regions.end(), PeerRegion{region, mapPeerRegion(peer, region)});
  }
  if (known->mapping.data() == nullptr) return nullptr;  // could not be mapped: CMA
  return static_cast<unsigned char*>(known->mapping.data()) + (address - region.base);
}

Mapping NodeComm::mapPeerRegion(int peer, const SharedRegion& region) const {
  const std::string path = "/proc/" + std::to_string(peers_[peer].pid) + "/fd/" + std::to_string(region.fd);
  Mapping mapping;
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  struct stat st {};
  std::string error;
  if (fd < 0) {
    error = "cannot open " + path + ": " + std::strerror(errno);
  } else if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_ino) != region.inode) {
    error = path + " is not the buffer rank " + std::to_string(peer) + " listed";
  } else {
    mapPeerSegment(fd, region.bytes, &mapping, &error, /*populate=*/false);
  }
  if (fd >= 0) closeFd(fd);
  if (mapping.data() == nullptr) {
    logf(logHost_, weftLogDebug, "node backend: rank %d's plugin-memory buffer goes by CMA: %s", peer,
         error.c_str());
  } else {
    logf(logHost_, weftLogDebug, "node backend: mapped rank %d's plugin-memory buffer of %llu bytes", peer,
         static_cast<unsigned long long>(region.bytes));
  }
  return mapping;
}

const unsigned char* NodeComm::peerInput(int peer, uint64_t address, size_t bytes, unsigned char* piece) {
  if (const unsigned char* mapped = peerMemory(peer, address, bytes)) {
    mappedBytes_ += bytes;
    return mapped;
  }
  readPeer(peer, piece, address, bytes);
  return piece;
}

bool NodeComm::mapPeerRanges(int peer, const std::vector<iovec>& remote, std::vector<iovec>* mapped) {
  mapped->clear();
  for (const iovec& r : remote) {
    unsigned char* here = peerMemory(peer, reinterpret_cast<uint64_t>(r.iov_base), r.iov_len);
    if (here == nullptr && r.iov_len > 0) return false;
    mapped->push_back({here, r.iov_len});
  }
  for (const iovec& r : remote) mappedBytes_ += r.iov_len;
  return true;
}

bool NodeComm::copyMappedList(int peer, bool write, const std::vector<iovec>& local,
                              const std::vector<iovec>& remote) {
  if (!mapPeerRanges(peer, remote, &mappedRanges_)) return false;
  // Both lists hold the same bytes, cut differently: copy the overlap of the current two ranges, step on.
  size_t li = 0, lo = 0, ri = 0, ro = 0;
  while (li < local.size() && ri < mappedRanges_.size()) {
    const size_t n = std::min(local[li].iov_len - lo, mappedRanges_[ri].iov_len - ro);
    if (n > 0) {
      unsigned char* here = static_cast<unsigned char*>(local[li].iov_base) + lo;
      unsigned char* there = static_cast<unsigned char*>(mappedRanges_[ri].iov_base) + ro;
      copyBytes(write ? there : here, write ? here : there, n);
    }
    lo += n;
    ro += n;
    if (lo == local[li].iov_len) {
      ++li;
      lo = 0;
    }
    if (ro == mappedRanges_[ri].iov_len) {
      ++ri;
      ro = 0;
    }
  }
  return true;
}

void NodeComm::cmaFailed(int peer, const char* call, int err) const {
  if (err == ESRCH || processExited(peers_[peer].pidfd)) {
    std::string exited = exitedPeers();
    if (exited.empty())
      exited = "rank " + std::to_string(peer) + " (pid " + std::to_string(peers_[peer].pid) + ")";
    failPeer(weftRemoteError, exited + " exited");
  }
  failPeer(weftSystemError, std::string("process_vm_") + call + " with rank " + std::to_string(peer) +
                                " failed: " + std::strerror(err));
}

void NodeComm::readPeer(int peer, void* dst, uint64_t address, size_t bytes, Stores stores) {
  if (bytes == 0) return;
  if (const unsigned char* mapped = peerMemory(peer, address, bytes)) {
    copyResult(dst, mapped, bytes, stores == Stores::Streamed);
    mappedBytes_ += bytes;
    return;
  }
  if (int err = cmaRead(peers_[peer].pid, dst, address, bytes); err != 0) cmaFailed(peer, "readv", err);
}

void NodeComm::writePeer(int peer, uint64_t address, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (unsigned char* mapped = peerMemory(peer, address, bytes)) {
    copyBytes(mapped, src, bytes);
    mappedBytes_ += bytes;
    return;
  }
  if (int err = cmaWrite(peers_[peer].pid, address, src, bytes); err != 0) cmaFailed(peer, "writev", err);
}

void NodeComm::readPeerList(int peer, const std::vector<iovec>& local, const std::vector<iovec>& remote) {
  if (copyMappedList(peer, false, local, remote)) return;
  if (int err = cmaList(peers_[peer].pid, false, local.data(), local.size(), remote.data(), remote.size());
      err != 0) {
    cmaFailed(peer, "readv", err);
  }
}

void NodeComm::writePeerList(int peer, const std::vector<iovec>& remote, const std::vector<iovec>& local) {
  if (copyMappedList(peer, true, local, remote)) return;
  if (int err = cmaList(peers_[peer].pid, true, local.data(), local.size(), remote.data(), remote.size());
      err != 0) {
    cmaFailed(peer, "writev", err);
  }
}

}  // namespace weft::shm
