// The Channel algorithms run on, over a communicator's transport connections.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>

#include "core/algorithms/channel.h"
#include "core/comm/comm.h"

namespace weft {

class CommChannel : public Channel {
 public:
  // `operation` names what runs, for error messages ("allreduce #12"). Collective channels tag every
  // message with the collective's number; point-to-point channels number messages per peer.
  CommChannel(weftComm& comm, int channel, std::string operation);

  int rank() const override { return comm_.rank; }
  int size() const override { return comm_.nranks; }
  Request isend(int peer, const void* data, size_t bytes) override;
  Request irecv(int peer, void* data, size_t bytes) override;
  void waitAll(std::span<Request> requests) override;
  void* scratch(int slot, size_t bytes) override;

 private:
  struct Transfer {
    int peer;
    bool isRecv;
    void* data;
    size_t bytes;
    uint32_t tag;
    void* connection = nullptr;
    void* request = nullptr;  // the transport's, once posted
    bool done = false;
  };

  // Posts a transfer once its connection exists; completes transfers to self. True when it moved.
  bool start(Transfer& t);
  // Tests a posted transfer. True when it completed.
  bool finish(Transfer& t);
  // Gives the core away while nothing moves, more and more patiently.
  void backOff(int idleRounds, const Transfer& waitingOn);
  [[noreturn]] void timedOut(std::span<Request> requests);
  uint32_t nextTag(int peer, bool isRecv);

  weftComm& comm_;
  int channel_;
  std::string operation_;
  uint32_t collectiveTag_ = 0;
  std::deque<Transfer> transfers_;  // deque: pointers handed out in Requests stay valid
  std::chrono::seconds timeout_;
};

}  // namespace weft
