// A communicator's backend: a plugin that runs whole collectives itself (the shm plugin for communicators
// whose ranks all live on one host, the mpi plugin for any). Weft keeps argument checks, issue order, groups,
// streams and weftAvg's division; the backend runs what it accepts, Weft's algorithms the rest.
#pragma once

#include <memory>
#include <span>

#include "core/algorithms/algorithms.h"
#include "core/comm/backend_watch.h"
#include "weft/plugin.h"

struct weftComm;

namespace weft {

struct LoadedPlugin;

class Backend {
 public:
  // Collective over comm (the caller holds its turn): every rank offers its part, and the backend is used
  // only when every rank could set it up. Returns null otherwise, on every rank alike. Throws only when
  // the exchange itself fails (a dead peer).
  static std::unique_ptr<Backend> setUp(weftComm& comm);

  Backend(const LoadedPlugin& plugin, void* bcomm, std::unique_ptr<BackendWatch> watch)
      : plugin_(plugin), bcomm_(bcomm), watch_(std::move(watch)) {}
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const char* name() const;
  // Whether the collective would run faster on buffers of the plugin's host memory (weftMemAlloc's, the
  // lanes' buffers: the peers map it and read it in place) than on other memory, enough to copy other buffers
  // there first (core/collectives/bounce.h): the plugin makes that memory and its advice extension, where
  // offered, says so. Alike on every rank.
  bool prefersHostMemory(weftCollType_t coll, const CollArgs& args) const;
  // Runs the collective when the backend accepts it (the decision is the same on every rank) and returns
  // true; false when Weft's own algorithms must run it. Throws the backend's error.
  bool run(weftCollType_t coll, const CollArgs& args, const char* operation);
  // The same for an in-place call whose input args.sendbuff copies (apart from recvbuff, in the plugin's
  // memory), when the plugin offers its copied-input extension: the backend leaves this rank's part of
  // recvbuff, which already holds the input, as it is. False when not offered or not accepted.
  bool runFromCopy(weftCollType_t coll, const CollArgs& args, const char* operation);
  // The same over a list of buffers (total: the type, op and total count), when the plugin offers its list
  // extension and accepts the operation; false otherwise.
  bool runList(weftCollType_t coll, const CollArgs& total, std::span<const weftBackendBuffer_v1> buffers,
               const char* operation);
  // Whether the plugin offers its list extension and takes this operation as a list.
  bool supportsList(weftCollType_t coll, const CollArgs& total) const;
  // Independent collectives in order, when the plugin offers runMany and supports each; false otherwise.
  bool runMany(std::span<const weftBackendOp_v1> ops, const char* operation);

 private:
  // Runs one plugin call, named for stall reports; turns its failure into an Error (a peer's fault notice
  // first, when one ended the call).
  template <typename Call>
  void call(const char* operation, Call&& call);

  const LoadedPlugin& plugin_;
  void* bcomm_;
  std::unique_ptr<BackendWatch> watch_;  // the plugin's aborted() callback reads it: lives as long as bcomm_
};

}  // namespace weft
