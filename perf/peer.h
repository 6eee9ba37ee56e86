// A peer is another collective library (Open MPI, Gloo) that commperf runs on the same buffers, sizes and
// rank set as Weft, so that one launch yields side-by-side timings. Peers are linked into commperf only.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "colls.h"
#include "options.h"
#include "weft/weft.h"

namespace commperf {

// Thrown by a peer call that failed; the message says which call and why.
class PeerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Peer {
 public:
  virtual ~Peer() = default;

  virtual const char* library() const = 0;  // "mpi", "gloo": the name in tables, JSON and plots
  virtual std::string version() const = 0;
  // How the peer moves bytes (e.g. "tcp on lo (127.0.0.1)"); empty when the library decides itself.
  virtual std::string transport() const { return {}; }

  // Empty when the peer can run this collective with this type and op; otherwise why not (printed as n/a).
  virtual std::string unsupported(const CollDesc& desc, weftDataType_t type,
                                  std::optional<weftRedOp_t> op) const = 0;
  // The peer's call or algorithm for this collective, as named in the output.
  virtual std::string algorithm(const CollDesc& desc) const = 0;

  // Called before the iterations of one shape (buffers, count, type and op fixed) and after them. Gloo's
  // classic algorithm classes bind their buffers when built, so they are built once here, not per call.
  virtual void prepare(const CollDesc& /*desc*/, const CallArgs& /*args*/) {}
  virtual void release() {}
  // Empty when calls of one shape may go to many buffer sets in turn (--fusion's N buffers, no prepare);
  // otherwise why not (printed as n/a).
  virtual std::string unsupportedManyBuffers(const CollDesc& /*desc*/) const { return {}; }

  // One out-of-place call, with Weft's buffer conventions (colls.h). Throws PeerError on failure.
  virtual void call(const CollDesc& desc, const CallArgs& args) = 0;

  // Whether the peer has an in-place form of this collective whose data lies where Weft's in-place form
  // keeps it (args from Bench::argsFor(..., true)); callInPlace runs it (--peer_in_place).
  virtual bool hasInPlace(const CollDesc& /*desc*/) const { return false; }
  virtual void callInPlace(const CollDesc& /*desc*/, const CallArgs& /*args*/) {}
  // Where callInPlace leaves this rank's result: recvbuff, unless the peer's in-place form puts it elsewhere
  // in the same buffer.
  virtual const void* inPlaceResult(const CollDesc& /*desc*/, const CallArgs& args) const { return args.recvbuff; }

  // Whether this rank's recvbuff holds a checkable result after call().
  virtual bool checksRank(const CollDesc& desc, int rank, int root) const { return desc.checksRank(rank, root); }
};

bool glooBuiltIn();

using Peers = std::vector<std::unique_ptr<Peer>>;

// One peer per --peer library, in that order. Collective over MPI_COMM_WORLD: every rank must call it. On
// failure (Gloo not built in, or its rendezvous failed) returns false with `error` saying which library and
// why, on every rank.
bool makePeers(const Options& options, int rank, int nranks, Peers& peers, std::string& error);

}  // namespace commperf
