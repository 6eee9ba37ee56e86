// The plugin context (one per init): settings, the context's doorbell, and what waitReady watches.
#ifndef WEFT_PLUGINS_SHM_CONTEXT_H
#define WEFT_PLUGINS_SHM_CONTEXT_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "shm_doorbell.h"
#include "shm_segment.h"
#include "weft/plugin.h"

namespace weft::shm {

class Context;
class Connection;
struct PendingConnect;

// A socket owned by one comm (or one connection being set up), registered with its context so that
// waitReady notices arrivals and departures. events is what the owner waits for (0: nothing); the owner
// updates it, waitReady reads it from any thread. Closes the socket when destroyed (not when its
// constructor throws: fd then stays the caller's).
class PolledSocket {
 public:
  PolledSocket(Context* ctx, int fd, short events);
  ~PolledSocket();
  PolledSocket(const PolledSocket&) = delete;
  PolledSocket& operator=(const PolledSocket&) = delete;

  int fd() const { return fd_; }
  // Unregisters and hands the socket over to the caller, who closes it.
  int release();
  void want(short events) { events_.store(events, std::memory_order_relaxed); }
  short wanted() const { return events_.load(std::memory_order_relaxed); }

 private:
  Context* ctx_;
  int fd_;
  std::atomic<short> events_;
};

// Messages up to this many bytes are copied through the ring; larger ones go by CMA where the connection
// agreed on it (else through the ring too, in pieces). Where a node backend found CMA cheap (CmaCost, and
// shm_node_calibrate.cpp), from kInlineMaxBytesWhereCmaIsCheap on: 2-vCPU Xeon (KVM), Send/Recv np 2,
// 2026-12-02, 16-64 KiB 3.6-9.5 us through the ring, 2.1-3.8 by CMA (Open MPI, by CMA: 2.2-4.2).
inline constexpr size_t kInlineMaxBytes = size_t{64} << 10;
inline constexpr size_t kInlineMaxBytesWhereCmaIsCheap = size_t{4} << 10;

// Whether a copy by process_vm_readv costs less than two copies through shared memory (WEFT_SHM_CMA_COST):
// it decides where the node backend's AllGather, AllToAll and Broadcast stop staging, and from what size
// the transport sends by CMA. Measured by the node backend at its first collective, or set.
enum class CmaCost { Measure, High, Low };

struct Settings {
  size_t ringBytes = 0;
  bool cma = false;  // WEFT_SHM_CMA allows it and process_vm_readv works on ourselves
  // The node backend (shm_node.h): whole collectives among ranks of one host.
  bool nodeCollectives = true;         // WEFT_SHM_COLL
  size_t stageBytes = 0;               // WEFT_SHM_STAGE_BYTES: per staging area; larger inputs go by CMA
  size_t reduceAllBytes = 0;           // WEFT_SHM_REDUCE_ALL_BYTES: AllReduce up to this: every rank reduces all
  CmaCost cmaCost = CmaCost::Measure;  // WEFT_SHM_CMA_COST
};

class Context {
 public:
  // Takes ownership of doorbellFd.
  Context(const weftPluginHost_v1* host, const Settings& settings, int doorbellFd, Mapping doorbell,
          uint64_t probeValue);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const weftPluginHost_v1* host() const { return host_; }
  size_t ringBytes() const { return settings_.ringBytes; }
  const Settings& settings() const { return settings_; }
  bool cmaEnabled() const { return settings_.cma; }
  DoorbellPage* doorbell() const { return static_cast<DoorbellPage*>(doorbell_.data()); }
  int doorbellFd() const { return doorbellFd_; }
  // A random value at a fixed address of this process: the acceptor reads it with process_vm_readv to
  // learn whether CMA works towards us.
  uint64_t probeAddress() const { return reinterpret_cast<uint64_t>(&probeValue_); }
  uint64_t probeValue() const { return probeValue_; }

  // Transport messages above this many bytes go by CMA (where the connection agreed on it): kInlineMaxBytes
  // until a node backend of this context finds CMA cheap, then kInlineMaxBytesWhereCmaIsCheap. Only the
  // sender decides (the receiver follows the header), so ranks need not agree.
  size_t inlineMaxBytes() const { return inlineMaxBytes_.load(std::memory_order_relaxed); }
  void setCmaCheap(bool cheap) {
    inlineMaxBytes_.store(cheap ? kInlineMaxBytesWhereCmaIsCheap : kInlineMaxBytes, std::memory_order_relaxed);
  }

  // Logs, once per context, that some connection copies through the segment because CMA failed.
  void cmaUnavailable(const std::string& reason);

  // Blocks up to timeoutUs (<= 0: does not block) until some connection may progress: its peer rang the
  // doorbell, or one of the registered sockets has something (a connection arriving, a peer gone).
  void waitReady(int timeoutUs);

  // Number of open comms and connections being set up.
  size_t openComms();

  // Connections being set up by connect(), found again by handle, token and connector id.
  std::mutex connectMutex;
  std::vector<std::unique_ptr<PendingConnect>> connects;

 private:
  friend class PolledSocket;
  friend class Connection;
  void add(PolledSocket* s);
  void remove(PolledSocket* s);
  void add(Connection* c);
  void remove(Connection* c);
  bool anyConnectionReady();
  bool anySocketReady();

  const weftPluginHost_v1* host_;
  Settings settings_;
  int doorbellFd_;
  Mapping doorbell_;
  volatile uint64_t probeValue_;  // volatile: read from outside the process
  std::atomic<bool> cmaLogged_{false};
  std::atomic<size_t> inlineMaxBytes_{kInlineMaxBytes};
  std::mutex mutex_;
  std::unordered_set<PolledSocket*> sockets_;
  std::unordered_set<Connection*> connections_;
};

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_CONTEXT_H
