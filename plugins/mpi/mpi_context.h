// The process's MPI state, shared by the transport and the backend: whether this process is part of an
// MPI job at all, who initialised MPI (only what the plugin initialised, it finalises), the thread level
// MPI gave, this process's place in MPI_COMM_WORLD with the job's identity, and the lock that serialises
// MPI calls when MPI was not given MPI_THREAD_MULTIPLE.
#ifndef WEFT_PLUGINS_MPI_CONTEXT_H
#define WEFT_PLUGINS_MPI_CONTEXT_H

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "mpi_wire.h"
#include "weft/plugin.h"

namespace weft::mpi {

// Settings read once at init (WEFT_MPI_*; see README.md).
struct Settings {
  // Largest element count handed to one MPI call. MPI counts are int; bigger operations are cut into
  // pieces of at most this many elements (lowering it exercises the splitting with small buffers).
  size_t maxCallElements = 0;
};

class Context {
 public:
  // Joins MPI: uses it when the application already initialised it, initialises it when mpirun (or
  // another PMIx/PMI launcher) started this process, and otherwise records why there is no MPI job here
  // (the plugin then declines every communicator, so Weft's other plugins carry them).
  Context(const weftPluginHost_v1* host, const Settings& settings);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const weftPluginHost_v1* host() const { return host_; }
  const Settings& settings() const { return settings_; }

  // Whether MPI can carry this process's traffic; when not, why (for the declining log lines).
  bool hasJob() const { return noJob_.empty(); }
  const std::string& noJobReason() const { return noJob_; }
  // True while MPI may be called (initialised and not yet finalised by anyone).
  static bool mpiUsable();

  int worldRank() const { return worldRank_; }
  int worldSize() const { return worldSize_; }
  uint64_t jobId() const { return jobId_; }

  // Held around every MPI call: a real lock when MPI gave less than MPI_THREAD_MULTIPLE (Weft calls
  // from its stream threads too), an empty one otherwise.
  std::unique_lock<std::mutex> mpiLock();

  // Transport bookkeeping: listeners, the data tags a connector picks, and the hellos that say who
  // connected. Connections of every Weft communicator share MPI_COMM_WORLD, told apart by tag.
  uint64_t addListener(uint64_t token);
  void removeListener(uint64_t listenerId);
  int nextDataTag();
  int controlTag() const { return controlTag_; }
  // Receives every hello that has arrived and files it under its listener; pops one for listenerId.
  // False when none is waiting. Throws std::runtime_error on an MPI failure.
  bool takeHello(uint64_t listenerId, Hello* hello, int* source);

  // Lets a waiting rank give its core away (MPI has no "wait for news" call with a timeout).
  void waitReady(int timeoutUs);

  // Finalises MPI if (and only if) this plugin initialised it and nobody has finalised it yet.
  static void finalizeOwnedMpi();

 private:
  void joinMpi();

  const weftPluginHost_v1* host_;
  Settings settings_;
  std::string noJob_;
  int worldRank_ = -1;
  int worldSize_ = 0;
  uint64_t jobId_ = 0;
  bool serialize_ = false;
  std::mutex mpiMutex_;

  std::mutex stateMutex_;  // listeners, hellos and the tag counter; taken before mpiMutex_, never after
  int controlTag_ = 0;
  int firstDataTag_ = 0;
  int lastDataTag_ = 0;
  int nextTag_ = 0;
  uint64_t nextListener_ = 1;
  std::map<uint64_t, uint64_t> listeners_;  // listener id -> job token
  std::map<uint64_t, std::deque<std::pair<Hello, int>>> hellos_;
};

}  // namespace weft::mpi

#endif  // WEFT_PLUGINS_MPI_CONTEXT_H
