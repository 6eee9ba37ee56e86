// The Channel algorithms run on, over a communicator's transport connections.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/algorithms/algorithms.h"
#include "core/algorithms/channel.h"
#include "core/comm/comm.h"

namespace weft {

class CommChannel : public Channel {
 public:
  // `operation` names what runs, for error messages ("allreduce #12"). Collective channels tag every
  // message with the collective's number; point-to-point channels number messages per peer.
  CommChannel(weftComm& comm, int channel, std::string_view operation);
  ~CommChannel() override;
  CommChannel(const CommChannel&) = delete;
  CommChannel& operator=(const CommChannel&) = delete;

  int rank() const override { return comm_.rank; }
  int size() const override { return comm_.nranks; }
  Request isend(int peer, const void* data, size_t bytes) override;
  Request irecv(int peer, void* data, size_t bytes) override;
  Request isendv(int peer, std::span<const BufferPiece> pieces) override;
  Request irecvv(int peer, std::span<const BufferPiece> pieces) override;
  void waitAll(std::span<Request> requests) override;
  void* scratch(int slot, size_t bytes) override;
  bool cutsLargeMessages(int peer) const override;
  bool copiesLargeMessagesOnce() const override { return comm_.linksCopyOnce; }

  // A batch's Send/Recv: remembered (in the reused storage) and waited for together at its end.
  void keep(const Request& request) { store_.kept.push_back(request); }
  void waitKept() { waitAll(store_.kept); }

 private:
  using Transfer = ChannelTransfer;

  // The next transfer of the storage, set for a message of `bytes` at `data` (nothing vectored); checks peer.
  Transfer& newTransfer(int peer, bool isRecv, void* data, size_t bytes);
  // Starts t, or queues it behind older messages of its queue.
  Request post(Transfer& t);
  Request postVectored(int peer, bool isRecv, std::span<const BufferPiece> pieces);
  // A received vectored message that went through the bounce buffer: into its pieces.
  static void scatterBounce(Transfer& t);
  // Index of the queue a transfer belongs to: messages of one queue start in the order they were posted.
  size_t queueOf(const Transfer& t) const { return static_cast<size_t>(t.peer) * 2 + (t.isRecv ? 1 : 0); }
  // Starts a transfer once its connection exists; completes transfers to self. True when it started.
  bool start(Transfer& t);
  // Tests a started transfer. True when it completed.
  bool finish(Transfer& t);
  // One pass over every unfinished transfer of this channel, oldest first, so that sends keep moving
  // while the caller waits for a receive. Returns whether anything moved; `stalled` is one that did not.
  bool progress(const Transfer*& stalled);
  // The peers of unfinished requests, for messages: "rank(s) 1, 3".
  std::string silentPeers(std::span<const Request> requests) const;
  uint32_t nextTag(int peer, bool isRecv);
  std::string_view operation() const { return {operation_, operationBytes_}; }

  weftComm& comm_;
  LaneState* lane_;  // collectives: the lane this thread runs them on; null for other channels
  int channel_;
  char operation_[64];         // no allocation per operation: "allreduce #12", truncated if ever longer
  size_t operationBytes_ = 0;  // its length: operation() is an argument of every transfer's trace line
  uint32_t collectiveTag_ = 0;
  std::unique_ptr<ChannelStorage> own_;  // only when the communicator's storage for channel_ is in use
  ChannelStorage& store_;
};

// Every rank's fixed-size record (a plain struct of integers), in rank order, through the communicator's own
// AllGather: how core exchanges setup and check records. The caller holds the turn; `operation` names it in
// error messages.
template <typename Record>
std::vector<Record> allGatherRecords(weftComm& comm, const Record& mine, const char* operation) {
  std::vector<Record> all(static_cast<size_t>(comm.nranks));
  CommChannel channel(comm, kCollectiveChannel, operation);
  CollArgs args;
  args.sendbuff = &mine;
  args.recvbuff = all.data();
  args.count = sizeof(Record);
  args.type = weftUint8;
  allGatherRing(args, channel);
  return all;
}

}  // namespace weft
