// The Gloo peer: the same collectives through Gloo's TCP transport. Built only when CMake finds Gloo.
//
// Rendezvous: rank 0 makes a temporary directory, MPI_Bcast's its path, and every rank meets in a
// gloo::rendezvous::FileStore there (one host; the directory is removed once connected). The device
// listens on the loopback, or on the interface WEFT_SOCKET_IFNAME selects, so both libraries can share one.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/config.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>
#include <mpi.h>
#include <stdlib.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "netif.h"
#include "peer.h"
#include "peer_internal.h"

namespace commperf {

namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

// Calls f with a value of the C++ type Gloo uses for `type`. bfloat16 travels as uint16_t: Gloo has no
// bfloat16 arithmetic, so only the collectives that move data accept it (see unsupported()).
template <class F>
void withGlooType(weftDataType_t type, F&& f) {
  switch (type) {
    case weftInt8:
      return f(int8_t{});
    case weftUint8:
      return f(uint8_t{});
    case weftInt32:
      return f(int32_t{});
    case weftUint32:
      return f(uint32_t{});
    case weftInt64:
      return f(int64_t{});
    case weftUint64:
      return f(uint64_t{});
    case weftFloat16:
      return f(gloo::float16{});
    case weftBfloat16:
      return f(uint16_t{});
    case weftFloat32:
      return f(float{});
    case weftFloat64:
    default:
      return f(double{});
  }
}

template <class T>
ReduceFn reduceFn(weftRedOp_t op) {
  switch (op) {
    case weftProd:
      return static_cast<ReduceFn>(&gloo::product<T>);
    case weftMax:
      return static_cast<ReduceFn>(&gloo::max<T>);
    case weftMin:
      return static_cast<ReduceFn>(&gloo::min<T>);
    case weftSum:
    default:
      return static_cast<ReduceFn>(&gloo::sum<T>);
  }
}

template <class T>
const gloo::ReductionFunction<T>* classicFn(weftRedOp_t op) {
  switch (op) {
    case weftProd:
      return gloo::ReductionFunction<T>::product;
    case weftMax:
      return gloo::ReductionFunction<T>::max;
    case weftMin:
      return gloo::ReductionFunction<T>::min;
    case weftSum:
    default:
      return gloo::ReductionFunction<T>::sum;
  }
}

int intCount(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX))
    throw PeerError(std::string(what) + ": Gloo's classic algorithms take an int count");
  return static_cast<int>(n);
}

// The key of a built classic algorithm: it stays bound to these buffers and this shape.
struct Shape {
  CollKind kind;
  void* buffer;
  size_t count;
  weftDataType_t type;
  weftRedOp_t op;
  bool operator==(const Shape&) const = default;
};

class GlooPeer final : public Peer {
 public:
  GlooPeer(int rank, int nranks, std::string allreduceAlgorithm)
      : rank_(rank), nranks_(nranks), allreduce_(std::move(allreduceAlgorithm)) {
    const char* spec = std::getenv("WEFT_SOCKET_IFNAME");
    std::string error;
    try {
      if (pickInterface(spec ? spec : "", iface_, error)) {
        gloo::transport::tcp::attr attr;
        attr.hostname = iface_.address;
        device_ = gloo::transport::tcp::CreateDevice(attr);
      }
    } catch (const std::exception& e) {
      error = std::string("tcp device on ") + iface_.address + ": " + e.what();
    }
    // Agree before the rendezvous, where a rank that is missing would be waited for until the timeout.
    int ok = error.empty() ? 1 : 0, allOk = 0;
    MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) throw PeerError(error);
    if (!allOk) throw PeerError("another rank could not create its Gloo device");
    context_ = std::make_shared<gloo::rendezvous::Context>(rank, nranks);
    context_->setTimeout(std::chrono::seconds(300));
    rendezvous();
  }

  const char* library() const override { return "gloo"; }

  std::string version() const override {
    std::string text = "Gloo " + std::to_string(GLOO_VERSION_MAJOR) + "." + std::to_string(GLOO_VERSION_MINOR) +
                       "." + std::to_string(GLOO_VERSION_PATCH);
#ifdef COMMPERF_GLOO_PACKAGE_VERSION
    text += " (package " COMMPERF_GLOO_PACKAGE_VERSION ")";
#endif
    return text;
  }

  std::string transport() const override { return "tcp on " + iface_.name + " (" + iface_.address + ")"; }

  std::string unsupported(const CollDesc& desc, weftDataType_t type,
                          std::optional<weftRedOp_t> op) const override {
    if (!desc.hasOp) return {};
    if (type == weftBfloat16) return "Gloo has no bfloat16 reduction";
    if (op && *op == weftAvg) return "Gloo has no avg op";
    return {};
  }

  std::string algorithm(const CollDesc& desc) const override {
    switch (desc.kind) {
      case CollKind::kAllReduce:
        if (allreduce_ == "ring_chunked") return "gloo::AllreduceRingChunked (copy, then in place)";
        if (allreduce_ == "halving_doubling") return "gloo::AllreduceHalvingDoubling (copy, then in place)";
        return "gloo::allreduce (" + allreduce_ + ")";
      case CollKind::kAllGather:
        return "gloo::allgather";
      case CollKind::kReduceScatter:
        return "gloo::ReduceScatterHalvingDoubling (copy, then in place)";
      case CollKind::kAllToAll:
        return "gloo::alltoall";
      case CollKind::kBroadcast:
        return "gloo::broadcast";
      case CollKind::kReduce:
        return "gloo::reduce";
      case CollKind::kSendRecv:
      default:
        return "gloo unbound buffer send/recv";
    }
  }

  void prepare(const CollDesc& desc, const CallArgs& args) override { classicFor(desc, args); }
  void release() override {
    classic_.reset();
    shape_.reset();
  }

  std::string unsupportedManyBuffers(const CollDesc& desc) const override {
    if (!usesClassic(desc.kind)) return {};
    return "Gloo's classic classes bind one buffer set when built (--gloo_allreduce ring or bcube)";
  }

  void call(const CollDesc& desc, const CallArgs& a) override {
    try {
      if (a.count == 0) return;  // nothing to move; Gloo's checks reject empty buffers
      withGlooType(a.type, [&](auto tag) { run<decltype(tag)>(desc, a); });
    } catch (const PeerError&) {
      throw;
    } catch (const std::exception& e) {
      throw PeerError(algorithm(desc) + " failed: " + e.what());
    }
  }

 private:
  void rendezvous() {
    char path[4096] = {};
    if (rank_ == 0) {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/commperf-gloo-XXXXXX";
      if (pattern.size() < sizeof path) {
        std::memcpy(path, pattern.c_str(), pattern.size() + 1);
        if (!mkdtemp(path)) path[0] = '\0';
      }
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!path[0]) throw PeerError("rank 0 could not make a rendezvous directory in $TMPDIR or /tmp");
    std::string error;
    try {
      gloo::rendezvous::FileStore store(path);
      context_->connectFullMesh(store, device_);
    } catch (const std::exception& e) {
      error = e.what();
    }
    MPI_Barrier(MPI_COMM_WORLD);  // everyone has read the store before it goes
    if (rank_ == 0) {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
    if (!error.empty()) throw PeerError("connecting the full mesh: " + error);
  }

  uint32_t nextTag() { return ++tag_; }

  bool usesClassic(CollKind kind) const {
    return kind == CollKind::kReduceScatter ||
           (kind == CollKind::kAllReduce && (allreduce_ == "ring_chunked" || allreduce_ == "halving_doubling"));
  }

  // The classic algorithm object for this call, built on first use for its shape.
  gloo::Algorithm* classicFor(const CollDesc& desc, const CallArgs& a) {
    if (!usesClassic(desc.kind) || a.count == 0) return nullptr;
    Shape shape{desc.kind, a.recvbuff, a.count, a.type, a.op};
    if (shape_ && *shape_ == shape) return classic_.get();
    release();
    withGlooType(a.type, [&](auto tag) {
      using T = decltype(tag);
      std::vector<T*> ptrs{static_cast<T*>(a.recvbuff)};
      if (desc.kind == CollKind::kReduceScatter) {
        int total = intCount(a.count * static_cast<size_t>(nranks_), desc.name);
        std::vector<int> recvElems(static_cast<size_t>(nranks_), static_cast<int>(a.count));
        classic_ = std::make_unique<gloo::ReduceScatterHalvingDoubling<T>>(context_, ptrs, total, recvElems,
                                                                           classicFn<T>(a.op));
      } else if (allreduce_ == "ring_chunked") {
        classic_ = std::make_unique<gloo::AllreduceRingChunked<T>>(context_, ptrs, intCount(a.count, desc.name),
                                                                   classicFn<T>(a.op));
      } else {
        classic_ = std::make_unique<gloo::AllreduceHalvingDoubling<T>>(
            context_, ptrs, intCount(a.count, desc.name), classicFn<T>(a.op));
      }
    });
    shape_ = shape;
    return classic_.get();
  }

  template <class T>
  void run(const CollDesc& desc, const CallArgs& a) {
    T* send = static_cast<T*>(const_cast<void*>(a.sendbuff));
    T* recv = static_cast<T*>(a.recvbuff);
    size_t n = static_cast<size_t>(nranks_);
    if (gloo::Algorithm* classic = classicFor(desc, a)) {
      // The classic classes reduce in place: the out-of-place form copies the input first (timed).
      size_t inputCount = desc.kind == CollKind::kReduceScatter ? a.count * n : a.count;
      std::memcpy(a.recvbuff, a.sendbuff, inputCount * sizeof(T));
      classic->run();
      return;
    }
    switch (desc.kind) {
      case CollKind::kAllReduce: {
        gloo::AllreduceOptions opts(context_);
        opts.setInput(send, a.count);
        opts.setOutput(recv, a.count);
        opts.setAlgorithm(allreduce_ == "bcube" ? gloo::AllreduceOptions::Algorithm::BCUBE
                                                : gloo::AllreduceOptions::Algorithm::RING);
        opts.setReduceFunction(reduceFn<T>(a.op));
        opts.setTag(nextTag());
        gloo::allreduce(opts);
        break;
      }
      case CollKind::kAllGather: {
        gloo::AllgatherOptions opts(context_);
        opts.setInput(send, a.count);
        opts.setOutput(recv, a.count * n);
        opts.setTag(nextTag());
        gloo::allgather(opts);
        break;
      }
      case CollKind::kAllToAll: {
        gloo::AlltoallOptions opts(context_);
        opts.setInput(send, a.count * n);
        opts.setOutput(recv, a.count * n);
        opts.setTag(nextTag());
        gloo::alltoall(opts);
        break;
      }
      case CollKind::kBroadcast: {
        gloo::BroadcastOptions opts(context_);
        if (a.rank == a.root) opts.setInput(send, a.count);
        opts.setOutput(recv, a.count);
        opts.setRoot(a.root);
        opts.setTag(nextTag());
        gloo::broadcast(opts);
        break;
      }
      case CollKind::kReduce: {
        gloo::ReduceOptions opts(context_);
        opts.setInput(send, a.count);
        opts.setOutput(recv, a.count);
        opts.setRoot(a.root);
        opts.setReduceFunction(reduceFn<T>(a.op));
        opts.setTag(nextTag());
        gloo::reduce(opts);
        break;
      }
      case CollKind::kSendRecv:
        sendRecv(a, a.count * sizeof(T));
        break;
      case CollKind::kReduceScatter:
        break;  // classic, above
    }
  }

  void sendRecv(const CallArgs& a, size_t bytes) {
    if (nranks_ == 1) {  // Gloo has no pair to itself
      std::memcpy(a.recvbuff, a.sendbuff, bytes);
      return;
    }
    int next = (a.rank + 1) % nranks_;
    int prev = (a.rank + nranks_ - 1) % nranks_;
    auto sendBuf = context_->createUnboundBuffer(const_cast<void*>(a.sendbuff), bytes);
    auto recvBuf = context_->createUnboundBuffer(a.recvbuff, bytes);
    uint64_t slot = gloo::Slot::build(0x7c, nextTag());
    recvBuf->recv(prev, slot);
    sendBuf->send(next, slot);
    if (!sendBuf->waitSend(context_->getTimeout()) || !recvBuf->waitRecv(context_->getTimeout()))
      throw PeerError("gloo send/recv timed out or was aborted");
  }

  int rank_;
  int nranks_;
  std::string allreduce_;
  NetInterface iface_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  uint32_t tag_ = 0;
  std::unique_ptr<gloo::Algorithm> classic_;
  std::optional<Shape> shape_;
};

}  // namespace

std::unique_ptr<Peer> makeGlooPeer(int rank, int nranks, const std::string& allreduceAlgorithm) {
  return std::make_unique<GlooPeer>(rank, nranks, allreduceAlgorithm);
}

}  // namespace commperf
