#include "core/comm/control_channel.h"

#include <thread>

#include "core/comm/comm.h"
#include "core/common/error.h"
#include "core/common/log.h"
#include "core/plugins/loader.h"

namespace weft {
namespace {

// Every control message carries this tag; its connection carries nothing else.
constexpr uint32_t kControlTag = 0x57435443;
// How long announcing a fault may hold the failing call: enough to connect to a live peer and send it
// 512 bytes, even across a network; a peer that is gone is given up on.
constexpr auto kAnnounceLimit = std::chrono::milliseconds(200);

void check(weftResult_t r, const char* call) {
  if (r != weftSuccess) fail(r, "{}: {}", call, weftGetErrorString(r));
}

}  // namespace

void ControlChannel::poll() {
  std::lock_guard lock(mutex_);
  try {
    comm_.connections->acceptArrived();
  } catch (const Error& e) {
    log::debug("control channel: {}", e.what());
  }
  readInboxes();
  progressSends();
}

void ControlChannel::throwIfFault(std::string_view operation) const {
  if (!hasFault()) return;
  std::lock_guard lock(mutex_);
  if (fault_) {
    fail(weftRemoteError, "{}: ended by a failure that rank {} saw first: {}", operation, fault_->origin,
         fault_->text);
  }
}

bool ControlChannel::awaitFault(std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  for (;;) {
    poll();
    if (hasFault() || Clock::now() >= deadline) return hasFault();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void ControlChannel::announceFault(weftResult_t code, const std::string& text) {
  std::lock_guard lock(mutex_);
  if (announced_) return;
  announced_ = true;
  ControlMessage notice = fault_ ? *fault_ : ControlMessage{ControlKind::Fault, comm_.rank, code, 0, text};
  for (int step = 1; step < comm_.nranks; step *= 2) {
    int peer = (comm_.rank + step) % comm_.nranks;
    if (peer != notice.origin) send(peer, notice);
  }
  auto deadline = Clock::now() + kAnnounceLimit;
  while (!progressSends() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

void ControlChannel::sendStall(int peer, uint32_t seconds, const std::string& what) {
  std::lock_guard lock(mutex_);
  send(peer, ControlMessage{ControlKind::Stall, comm_.rank, weftSuccess, seconds, what});
  progressSends();
}

void ControlChannel::send(int peer, const ControlMessage& message) {
  outgoing_.push_back(Outgoing{peer, encodeControlMessage(message)});
}

bool ControlChannel::progressSends() {
  // A notice may go to a peer that has already left (or died): a failed send is dropped below and logged
  // at debug, and the transport's own complaint is no louder.
  PluginFailuresExpected quiet;
  for (auto it = outgoing_.begin(); it != outgoing_.end();) {
    Outgoing& o = *it;
    bool finished = false;
    try {
      if (o.connection == nullptr) o.connection = comm_.connections->trySend(o.peer, kControlChannel);
      const weftTransportOps_v1& ops = comm_.connections->ops(o.peer);
      if (o.connection != nullptr && o.request == nullptr) {
        check(ops.isend(o.connection, o.buffer.data(), o.buffer.size(), kControlTag, nullptr, &o.request), "send");
      }
      if (o.request != nullptr) {
        int done = 0;
        size_t size = 0;
        weftResult_t r = ops.test(o.request, &done, &size);
        if (r != weftSuccess) o.request = nullptr;  // a failed request is freed by the transport
        check(r, "send");
        finished = done != 0;
      }
    } catch (const Error& e) {
      log::debug("control channel: message to rank {} dropped: {}", o.peer, e.what());
      finished = true;
    }
    it = finished ? outgoing_.erase(it) : std::next(it);
  }
  return outgoing_.empty();
}

void ControlChannel::readInboxes() {
  auto connectionsLock = comm_.connections->lock();  // another thread's accept may append to peers
  const std::vector<int>& peers = comm_.connections->connectedToControl();
  for (size_t i = 0; i < peers.size(); ++i) {  // by index: tryRecv below may accept, appending to peers
    const int peer = peers[i];
    Inbox& in = inboxes_[peer];
    if (in.broken) continue;
    try {
      if (in.connection == nullptr) in.connection = comm_.connections->tryRecv(peer, kControlChannel);
      const weftTransportOps_v1& ops = comm_.connections->ops(peer);
      for (;;) {
        if (in.request == nullptr) {
          check(ops.irecv(in.connection, in.buffer.data(), in.buffer.size(), kControlTag, nullptr, &in.request),
                "receive");
        }
        int done = 0;
        size_t size = 0;
        weftResult_t r = ops.test(in.request, &done, &size);
        if (r != weftSuccess || done) in.request = nullptr;
        check(r, "receive");
        if (!done) break;
        deliver(peer, in.buffer, size);
      }
    } catch (const Error& e) {
      log::debug("control channel: connection from rank {} closed: {}", peer, e.what());
      in.broken = true;
    }
  }
}

void ControlChannel::deliver(int peer, const ControlBytes& bytes, size_t size) {
  std::string problem;
  std::optional<ControlMessage> message =
      decodeControlMessage(std::span<const unsigned char>(bytes.data(), size), comm_.nranks, &problem);
  if (!message) {
    log::warn("control channel: ignored a message from rank {}: {}", peer, problem);
    return;
  }
  if (message->kind == ControlKind::Fault) {
    if (!fault_) {
      log::debug("control channel: rank {} passed on the failure of rank {}: {}", peer, message->origin,
                 message->text);
      fault_ = std::move(*message);
      hasFault_.store(true, std::memory_order_release);
    }
    return;
  }
  stallNews_[message->origin] = StallNews{std::move(*message), Clock::now()};
}

}  // namespace weft
