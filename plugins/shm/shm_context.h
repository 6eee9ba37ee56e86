// The plugin context (one per init): settings, the context's doorbell, and what waitReady watches.
#ifndef WEFT_PLUGINS_SHM_CONTEXT_H
#define WEFT_PLUGINS_SHM_CONTEXT_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
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

// Whether a large AllReduce runs faster by CMA on the callers' buffers than copied through memory the peers
// map (core's bounce) (WEFT_SHM_CMA_COST): measured by the node backend at its first collective
// (shm_node_calibrate.cpp), or set.
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

// What the node backend's first collectives found about CMA against the bounce (shm_node_calibrate.cpp), by
// rank count, so that a process's later communicators of that size need not time it again. Any thread.
class CmaVerdicts {
 public:
  enum Verdict : uint64_t { kBounce = 0, kCma = 1, kUnknown = 2 };
  Verdict find(int ranks) const;
  void remember(int ranks, Verdict verdict);

 private:
  mutable std::mutex mutex_;
  std::map<int, Verdict> byRanks_;
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

  // Logs, once per context, that some connection copies through the segment because CMA failed.
  void cmaUnavailable(const std::string& reason);

  // Blocks up to timeoutUs (<= 0: does not block) until some connection may progress: its peer rang the
  // doorbell, or one of the registered sockets has something (a connection arriving, a peer gone).
  void waitReady(int timeoutUs);

  // Number of open comms and connections being set up.
  size_t openComms();

  CmaVerdicts cmaVerdicts;

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
  std::mutex mutex_;
  std::unordered_set<PolledSocket*> sockets_;
  std::unordered_set<Connection*> connections_;
};

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_CONTEXT_H
