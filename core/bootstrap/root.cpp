// The bootstrap root: collects one hello per rank, then answers every rank with all blobs.
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/bootstrap/bootstrap.h"
#include "core/bootstrap/bootstrap_wire.h"
#include "core/bootstrap/unique_id.h"
#include "core/common/error.h"
#include "core/common/log.h"

namespace weft {
namespace {

struct Arrival {
  Socket socket;
  Blob blob;
  bool present = false;
};

void sendReply(const Socket& s, int32_t status, int32_t nranks, const std::string& message,
               Clock::time_point deadline) {
  wire::Reply reply{wire::kBootstrapMagic, status, nranks, static_cast<uint32_t>(message.size())};
  sendAll(s, &reply, sizeof(reply), deadline);
  if (!message.empty()) sendAll(s, message.data(), message.size(), deadline);
}

// Reads one hello; returns false (after logging) for a connection that is not a rank of this job.
bool readHello(const Socket& s, uint64_t token, wire::Hello& hello, Blob& blob) {
  // A peer gets a few seconds to say hello, so a stray connection cannot stall the job for long.
  auto deadline = Clock::now() + std::chrono::seconds(10);
  recvAll(s, &hello, sizeof(hello), deadline);
  switch (wire::checkHello(hello, token)) {
    case wire::HelloVerdict::NotWeft:
      log::warn("bootstrap root: dropped a connection that is not a Weft bootstrap (magic/version)");
      return false;
    case wire::HelloVerdict::WrongToken:
      log::warn("bootstrap root: dropped a connection with a wrong job token");
      return false;
    case wire::HelloVerdict::OversizedBlob:
      log::warn("bootstrap root: dropped a hello with an oversized blob ({} bytes)", hello.blobBytes);
      return false;
    case wire::HelloVerdict::Accept:
      break;
  }
  blob.resize(hello.blobBytes);
  recvAll(s, blob.data(), blob.size(), deadline);
  return true;
}

void runRoot(Socket listener, uint64_t token, Clock::time_point deadline) {
  std::vector<Arrival> ranks;
  int32_t nranks = -1;
  int arrived = 0;
  while (nranks < 0 || arrived < nranks) {
    Socket s = acceptBefore(listener, deadline);
    if (s.fd() < 0) {
      log::error("bootstrap root: only {} of {} ranks arrived before WEFT_TIMEOUT", arrived, nranks);
      return;  // closing every socket tells the waiting ranks
    }
    wire::Hello hello{};
    Blob blob;
    try {
      if (!readHello(s, token, hello, blob)) continue;
    } catch (const Error& e) {
      log::warn("bootstrap root: dropped a connection: {}", e.what());
      continue;
    }
    std::string problem = wire::helloProblem(hello, nranks, [&](int32_t r) { return ranks[r].present; });
    if (!problem.empty()) {
      log::error("bootstrap root: {}", problem);
      try {
        sendReply(s, weftInvalidUsage, nranks, problem, Clock::now() + std::chrono::seconds(5));
      } catch (const Error&) {
      }
      continue;
    }
    if (nranks < 0) {
      nranks = hello.nranks;
      ranks.resize(nranks);
    }
    ranks[hello.rank] = Arrival{std::move(s), std::move(blob), true};
    ++arrived;
  }
  for (Arrival& a : ranks) {
    try {
      sendReply(a.socket, weftSuccess, nranks, "", deadline);
      for (const Arrival& b : ranks) {
        auto length = static_cast<uint32_t>(b.blob.size());
        sendAll(a.socket, &length, sizeof(length), deadline);
        sendAll(a.socket, b.blob.data(), b.blob.size(), deadline);
      }
    } catch (const Error& e) {
      log::error("bootstrap root: could not answer a rank: {}", e.what());
    }
  }
  log::debug("bootstrap root: {} ranks connected, done", nranks);
}

// Roots running in this process, by token, each with a future that is ready once it has finished.
std::mutex rootsMutex;
std::multimap<uint64_t, std::shared_future<void>> runningRoots;

}  // namespace

namespace wire {

HelloVerdict checkHello(const Hello& hello, uint64_t token) {
  if (hello.magic != kBootstrapMagic || hello.version != kBootstrapVersion) return HelloVerdict::NotWeft;
  if (!tokensEqual(hello.token, token)) return HelloVerdict::WrongToken;
  if (hello.blobBytes > kMaxBlobBytes) return HelloVerdict::OversizedBlob;
  return HelloVerdict::Accept;
}

std::string helloProblem(const Hello& hello, int32_t nranks, const std::function<bool(int32_t)>& joined) {
  if (hello.nranks < 1 || hello.nranks > kMaxRanks)
    return "nranks " + std::to_string(hello.nranks) + " is out of range";
  if (nranks >= 0 && hello.nranks != nranks) {
    return "rank " + std::to_string(hello.rank) + " says nranks " + std::to_string(hello.nranks) +
           " but other ranks said " + std::to_string(nranks);
  }
  if (hello.rank < 0 || hello.rank >= hello.nranks) {
    return "rank " + std::to_string(hello.rank) + " is out of range for nranks " + std::to_string(hello.nranks);
  }
  if (nranks >= 0 && joined(hello.rank)) return "rank " + std::to_string(hello.rank) + " joined twice";
  return "";
}

std::vector<Blob> readReply(const std::function<void(void*, size_t)>& read, int nranks, int rank) {
  Reply reply{};
  read(&reply, sizeof(reply));
  if (reply.magic != kBootstrapMagic) fail(weftRemoteError, "bootstrap root sent a malformed reply");
  if (reply.status != weftSuccess) {
    std::string message(std::min<uint32_t>(reply.messageBytes, 4096), '\0');
    read(message.data(), message.size());
    // Only a weftResult_t may reach the caller as one; anything else is a corrupt reply (found by tests/fuzz).
    const bool known = reply.status > weftSuccess && reply.status <= weftNotSupported;
    fail(known ? static_cast<weftResult_t>(reply.status) : weftRemoteError, "bootstrap root refused rank {}: {}",
         rank, message);
  }
  if (reply.nranks != nranks) fail(weftRemoteError, "bootstrap root answered for {} ranks", reply.nranks);
  std::vector<Blob> blobs(nranks);
  for (Blob& b : blobs) {
    uint32_t length = 0;
    read(&length, sizeof(length));
    if (length > kMaxBlobBytes) fail(weftRemoteError, "bootstrap blob of {} bytes is too large", length);
    b.resize(length);
    read(b.data(), length);
  }
  return blobs;
}

}  // namespace wire

void startBootstrapRoot(Socket listener, uint64_t token) {
  std::promise<void> finished;
  {
    std::lock_guard lock(rootsMutex);
    runningRoots.emplace(token, finished.get_future().share());
  }
  // The deadline (WEFT_TIMEOUT) is read here, not in the thread: a thread that starts late, when the
  // process is already exiting, must not read the settings that exit is tearing down (seen under load).
  const Clock::time_point deadline = deadlineFromNow();
  std::thread([listener = std::move(listener), token, deadline, finished = std::move(finished)]() mutable {
    try {
      runRoot(std::move(listener), token, deadline);
    } catch (const std::exception& e) {
      log::error("bootstrap root failed: {}", e.what());
    }
    finished.set_value();
  }).detach();
}

void waitForLocalBootstrapRoot(uint64_t token) {
  std::shared_future<void> done;
  {
    std::lock_guard lock(rootsMutex);
    auto it = runningRoots.find(token);
    if (it == runningRoots.end()) return;
    done = it->second;
    runningRoots.erase(it);
  }
  done.wait();
}

std::vector<Blob> bootstrapExchange(const SocketAddress& root, uint64_t token, int nranks, int rank,
                                    const Blob& blob) {
  auto deadline = deadlineFromNow();
  Socket s = connectTo(root, deadline);
  wire::Hello hello{
      wire::kBootstrapMagic, wire::kBootstrapVersion, token, nranks, rank, static_cast<uint32_t>(blob.size()), 0};
  sendAll(s, &hello, sizeof(hello), deadline);
  sendAll(s, blob.data(), blob.size(), deadline);
  return wire::readReply([&](void* p, size_t n) { recvAll(s, p, n, deadline); }, nranks, rank);
}

}  // namespace weft
