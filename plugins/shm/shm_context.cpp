#include "shm_context.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

#include "shm_conn.h"
#include "shm_log.h"
#include "shm_setup.h"
#include "shm_socket.h"

namespace weft::shm {

namespace {
// waitReady sleeps on the doorbell in slices of at most this, looking at the sockets between slices: a
// peer's death or a new connection does not ring the doorbell, so this bounds how late it is noticed.
constexpr int kSliceUs = 10000;
}  // namespace

PolledSocket::PolledSocket(Context* ctx, int fd, short events) : ctx_(ctx), fd_(fd), events_(events) {
  ctx_->add(this);
}

PolledSocket::~PolledSocket() {
  if (fd_ < 0) return;
  ctx_->remove(this);
  closeFd(fd_);
}

int PolledSocket::release() {
  ctx_->remove(this);
  int fd = fd_;
  fd_ = -1;
  return fd;
}

Context::Context(const weftPluginHost_v1* host, const Settings& settings, int doorbellFd, Mapping doorbell,
                 uint64_t probeValue)
    : host_(host),
      settings_(settings),
      doorbellFd_(doorbellFd),
      doorbell_(std::move(doorbell)),
      probeValue_(probeValue) {}

// Pending connects unregister their sockets from this context: gone before the registry is.
Context::~Context() {
  connects.clear();
  closeFd(doorbellFd_);
}

CmaVerdicts::Verdict CmaVerdicts::find(int ranks) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = byRanks_.find(ranks);
  return it != byRanks_.end() ? it->second : kUnknown;
}

void CmaVerdicts::remember(int ranks, Verdict verdict) {
  std::lock_guard<std::mutex> lock(mutex_);
  byRanks_[ranks] = verdict;
}

void Context::cmaUnavailable(const std::string& reason) {
  if (cmaLogged_.exchange(true)) return;
  logf(host_, weftLogInfo, "CMA not available (%s): copying through the segment", reason.c_str());
}

void Context::add(PolledSocket* s) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.insert(s);
}

void Context::remove(PolledSocket* s) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.erase(s);
}

void Context::add(Connection* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.insert(c);
}

void Context::remove(Connection* c) {
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.erase(c);
}

size_t Context::openComms() {
  std::lock_guard<std::mutex> lock(mutex_);
  return sockets_.size();
}

bool Context::anyConnectionReady() {
  // Under the lock: a connection cannot be closed (and its segment unmapped) while we look at it.
  std::lock_guard<std::mutex> lock(mutex_);
  return std::any_of(connections_.begin(), connections_.end(),
                     [](const Connection* c) { return c->mayProgress(); });
}

bool Context::anySocketReady() {
  // Polled kBatch at a time from an array on the stack: a wait that outlasts the doorbell's slice (a peer
  // descheduled on a loaded host) must allocate nothing, as the calls around it do (docs/plans.md).
  constexpr size_t kBatch = 64;
  pollfd fds[kBatch];
  size_t next = 0;  // sockets_ position the next batch starts at
  for (;;) {
    size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next >= sockets_.size()) return false;  // the set may shrink between batches
      auto it = std::next(sockets_.begin(), static_cast<ptrdiff_t>(next));
      for (; it != sockets_.end() && n < kBatch; ++it, ++next) {
        short events = (*it)->wanted();
        if (events != 0) fds[n++] = pollfd{(*it)->fd(), events, 0};
      }
    }
    // A socket closed by its owner after the snapshot at worst wakes this call early: the caller retries.
    if (n > 0 && poll(fds, n, 0) > 0) return true;
  }
}

void Context::waitReady(int timeoutUs) {
  if (timeoutUs <= 0) return;
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::microseconds(timeoutUs);
  for (;;) {
    long long left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
    if (left <= 0) return;
    {
      DoorbellSleep sleep(doorbell());
      if (anyConnectionReady()) return;
      if (sleep.sleep(static_cast<int>(std::min<long long>(left, kSliceUs)))) return;
    }
    if (anySocketReady()) return;
  }
}

}  // namespace weft::shm
