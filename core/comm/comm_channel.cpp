#include "core/comm/comm_channel.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "core/comm/idle_wait.h"
#include "core/comm/transfer_failure.h"
#include "core/common/error.h"
#include "core/common/log.h"
#include "core/common/rank_list.h"
#include "plugins/common/copy_bytes.h"

namespace weft {
namespace {
// What the CommChannels of a channel share: the lane's storage for collectives, the communicator's otherwise.
ChannelStorage& sharedStorage(weftComm& comm, LaneState* lane, int channel) {
  return lane != nullptr ? lane->storage : comm.channelStorage[channel];
}
}  // namespace

CommChannel::CommChannel(weftComm& comm, int channel, std::string_view operation)
    : comm_(comm),
      lane_(channel == kCollectiveChannel ? &laneOf(comm) : nullptr),
      channel_(lane_ != nullptr ? lane_->channel : channel),
      // The shared storage unless a CommChannel of the same channel uses it (nested channels).
      own_(sharedStorage(comm, lane_, channel).inUse ? std::make_unique<ChannelStorage>() : nullptr),
      store_(own_ ? *own_ : sharedStorage(comm, lane_, channel)) {
  store_.inUse = true;
  store_.used = 0;
  store_.active.clear();
  store_.kept.clear();
  const size_t queues = static_cast<size_t>(comm.nranks) * 2;
  if (store_.unstartedTotal != 0 || store_.unstarted.size() != queues) {
    store_.unstarted.assign(queues, 0);
    store_.unstartedTotal = 0;
  }
  if (store_.blockedPass.size() != queues) store_.blockedPass.assign(queues, 0);
  if (lane_ != nullptr) collectiveTag_ = lane_->collectiveCount++;
  // By hand rather than with fmt: this runs for every operation, and fmt's formatting machinery cost more
  // than the rest of a small Send/Recv's setup.
  char* const last = operation_ + sizeof(operation_) - 1;
  char* end = operation_ + operation.copy(operation_, static_cast<size_t>(last - operation_));
  if (lane_ != nullptr && last - end > 2) {
    end[0] = ' ';
    end[1] = '#';
    if (auto [next, error] = std::to_chars(end + 2, last, collectiveTag_); error == std::errc{}) end = next;
  }
  *end = '\0';
  operationBytes_ = static_cast<size_t>(end - operation_);
}

CommChannel::~CommChannel() {
  store_.active.clear();
  store_.kept.clear();
  store_.used = 0;
  store_.inUse = false;
}

uint32_t CommChannel::nextTag(int peer, bool isRecv) {
  if (lane_ != nullptr) return collectiveTag_;
  return isRecv ? comm_.receivedFrom[peer]++ : comm_.sentTo[peer]++;
}

CommChannel::Transfer& CommChannel::newTransfer(int peer, bool isRecv, void* data, size_t bytes) {
  if (peer < 0 || peer >= comm_.nranks) {
    fail(weftInternalError, "{}: {} rank {} of {}", operation(), isRecv ? "receive from" : "send to", peer,
         comm_.nranks);
  }
  if (store_.used == store_.transfers.size()) store_.transfers.emplace_back();
  Transfer& t = store_.transfers[store_.used++];
  // Field by field: the vectors keep their capacity from earlier operations.
  t.peer = peer;
  t.isRecv = isRecv;
  t.data = data;
  t.bytes = bytes;
  t.tag = nextTag(peer, isRecv);
  t.connection = t.request = nullptr;
  t.started = t.done = t.vectored = false;
  t.pieces.clear();
  return t;
}

Request CommChannel::isend(int peer, const void* data, size_t bytes) {
  return post(newTransfer(peer, false, const_cast<void*>(data), bytes));
}

Request CommChannel::irecv(int peer, void* data, size_t bytes) {
  return post(newTransfer(peer, true, data, bytes));
}

Request CommChannel::isendv(int peer, std::span<const BufferPiece> pieces) {
  return postVectored(peer, false, pieces);
}

Request CommChannel::irecvv(int peer, std::span<const BufferPiece> pieces) {
  return postVectored(peer, true, pieces);
}

Request CommChannel::postVectored(int peer, bool isRecv, std::span<const BufferPiece> pieces) {
  size_t bytes = 0;
  for (const BufferPiece& piece : pieces) bytes += piece.bytes;
  Transfer& t = newTransfer(peer, isRecv, nullptr, bytes);
  t.vectored = !pieces.empty() && peer != comm_.rank && comm_.connections->vecOps(peer) != nullptr;
  // The pieces are kept for the transport's vectored calls, or for scattering a received bounce buffer; a
  // send without vectored calls is packed into the bounce buffer now and sent from it like any message.
  if (t.vectored || isRecv) {
    for (const BufferPiece& piece : pieces) t.pieces.push_back({piece.data, piece.bytes});
  }
  if (!t.vectored) {
    t.bounce.resize(bytes);
    t.data = t.bounce.data();
    if (!isRecv) {
      unsigned char* to = t.bounce.data();
      for (const BufferPiece& piece : pieces) {
        if (piece.bytes != 0) copyBytes(to, piece.data, piece.bytes);
        to += piece.bytes;
      }
    }
  }
  return post(t);
}

void CommChannel::scatterBounce(Transfer& t) {
  if (t.vectored || t.pieces.empty()) return;
  const unsigned char* from = t.bounce.data();
  for (const weftTransportIov_v1& piece : t.pieces) {
    if (piece.size != 0) copyBytes(piece.data, from, piece.size);
    from += piece.size;
  }
}

Request CommChannel::post(Transfer& t) {
  // Start now unless an older message of the same queue is still waiting for its connection.
  if (store_.unstarted[queueOf(t)] > 0 || !start(t)) {
    ++store_.unstarted[queueOf(t)];
    ++store_.unstartedTotal;
  }
  if (!t.done) store_.active.push_back(&t);
  return {&t};
}

bool CommChannel::start(Transfer& t) {
  if (t.peer == comm_.rank) {
    auto& queue = lane_ != nullptr ? lane_->selfMessages : comm_.selfMessages[channel_];
    if (!t.isRecv) {  // sends to self are eager copies
      const auto* bytes = static_cast<const unsigned char*>(t.data);
      queue.emplace_back(bytes, bytes + t.bytes);
      t.started = t.done = true;
      return true;
    }
    if (queue.empty()) return false;
    if (queue.front().size() != t.bytes) {
      fail(weftInvalidUsage, "{}: rank {} received {} bytes from itself, expected {}", operation(), comm_.rank,
           queue.front().size(), t.bytes);
    }
    if (t.bytes > 0) copyBytes(t.data, queue.front().data(), t.bytes);
    queue.pop_front();
    scatterBounce(t);
    t.started = t.done = true;
    return true;
  }
  if (t.connection == nullptr) {
    t.connection =
        t.isRecv ? comm_.connections->tryRecv(t.peer, channel_) : comm_.connections->trySend(t.peer, channel_);
    if (t.connection == nullptr) return false;
  }
  weftResult_t r;
  if (t.vectored) {
    const weftTransportVecOps_v1& vec = *comm_.connections->vecOps(t.peer);
    const int count = static_cast<int>(t.pieces.size());
    r = t.isRecv ? vec.irecvv(t.connection, t.pieces.data(), count, t.tag, &t.request)
                 : vec.isendv(t.connection, t.pieces.data(), count, t.tag, &t.request);
  } else {
    const weftTransportOps_v1& ops = comm_.connections->ops(t.peer);
    r = t.isRecv ? ops.irecv(t.connection, t.data, t.bytes, t.tag, nullptr, &t.request)
                 : ops.isend(t.connection, t.data, t.bytes, t.tag, nullptr, &t.request);
  }
  if (r != weftSuccess) failToStart(comm_, operation(), t.isRecv, t.peer, r);
  t.started = true;
  return true;
}

bool CommChannel::finish(Transfer& t) {
  int done = 0;
  size_t received = 0;
  weftResult_t r = comm_.connections->ops(t.peer).test(t.request, &done, &received);
  if (r != weftSuccess) {
    t.request = nullptr;
    failTransfer(comm_, operation(), t.isRecv, t.peer, r);
  }
  if (!done) return false;
  t.request = nullptr;
  t.done = true;
  log::trace("{}: {} rank {} done, {} bytes, tag {}", operation(), t.isRecv ? "recv from" : "send to", t.peer,
             received, t.tag);
  if (t.isRecv && received != t.bytes) failSizeMismatch(comm_, operation(), t.peer, received, t.bytes);
  if (t.isRecv) scatterBounce(t);
  return true;
}

bool CommChannel::progress(const Transfer*& stalled) {
  bool progressed = false;
  if (++store_.pass == 0) {  // wrapped: stamps of old passes could look current
    std::fill(store_.blockedPass.begin(), store_.blockedPass.end(), 0);
    store_.pass = 1;
  }
  for (Transfer* t : store_.active) {
    if (!t->started) {
      size_t queue = queueOf(*t);
      if (store_.blockedPass[queue] == store_.pass || !start(*t)) {
        store_.blockedPass[queue] = store_.pass;  // younger messages of this queue must not overtake it
        stalled = t;
        continue;
      }
      --store_.unstarted[queue];
      --store_.unstartedTotal;
      progressed = true;
      if (t->done) continue;
    }
    if (finish(*t)) {
      progressed = true;
    } else {
      stalled = t;
    }
  }
  std::erase_if(store_.active, [](const Transfer* t) { return t->done; });
  return progressed;
}

void CommChannel::waitAll(std::span<Request> requests) {
  auto allDone = [&] {
    return std::all_of(requests.begin(), requests.end(), [](const Request& r) {
      return r.handle == nullptr || static_cast<const Transfer*>(r.handle)->done;
    });
  };
  IdleWait wait(comm_, operation());
  while (!allDone()) {
    wait.throwIfAborted();
    const Transfer* stalled = nullptr;
    if (progress(stalled)) {
      wait.moved();
      continue;
    }
    if (stalled == nullptr) break;
    // Sends to self complete when posted, so a receive from self that found nothing never will.
    if (stalled->peer == comm_.rank) {
      fail(weftInvalidUsage,
           "{}: rank {} receives from itself but sent itself nothing; pair Send and Recv to self "
           "inside weftGroupStart/End",
           operation(), comm_.rank);
    }
    wait.idle(stalled->peer, stalled->connection != nullptr, [&] { return silentPeers(requests); });
  }
  for (Request& request : requests) request.handle = nullptr;
}

std::string CommChannel::silentPeers(std::span<const Request> requests) const {
  std::set<int> peers;
  for (const Request& request : requests) {
    auto* t = static_cast<const Transfer*>(request.handle);
    if (t != nullptr && !t->done) peers.insert(t->peer);
  }
  return silentRankList(peers);
}

void* CommChannel::scratch(int slot, size_t bytes) {
  auto& buffer = (lane_ != nullptr ? *lane_ : comm_.mainLane).scratch[slot & 1];
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

// shm, the one same-host transport, moves a large message by one CMA copy or through its own ring. Between
// ranks of a host that outnumber its CPUs, each segment waits for its receiver to be scheduled before the next
// may go (the send window), so whole messages, which the socket buffers take at once, win: 4 ranks on 2 vCPUs
// over tcp, AllReduce at 4 MiB 5-15 % faster whole, other collectives and sizes within the noise (3 ranks
// alike). Both ends see the same host and the same CPUs, so they cut alike.
bool CommChannel::cutsLargeMessages(int peer) const {
  if (peer == comm_.rank) return true;
  if (comm_.connections->sameHostOnly(peer)) return false;
  return !comm_.hostCpusShared || comm_.hosts.hostOf(peer) != comm_.hosts.hostOf(comm_.rank);
}

}  // namespace weft
