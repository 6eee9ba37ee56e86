#include "mpi_context.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mpi_log.h"

namespace weft::mpi {
namespace {

// Set once this plugin has called MPI_Init_thread itself: only then does it finalise MPI (at exit, since
// Weft keeps plugins loaded until then, or at the plugin's finalize).
std::atomic<bool> gOwnsMpi{false};

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

// Whether an MPI launcher started this process (Open MPI's mpirun, or any PMIx/PMI launcher such as srun
// or MPICH's hydra): only then does initialising MPI join a job rather than make a lonely singleton.
bool startedByLauncher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

uint64_t fnv1a(const char* text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char* p = text; *p != '\0'; ++p) hash = (hash ^ static_cast<unsigned char>(*p)) * 0x100000001b3ULL;
  return hash;
}

// The job's identity, equal on every process of one mpirun and different between two: the launcher's
// namespace. 0 when no launcher says (then only the world size and distinct ranks are checked).
uint64_t jobIdentity() {
  for (const char* name : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "PMI_KVSNAME", "SLURM_STEP_ID"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') return fnv1a(value) | 1;
  }
  return 0;
}

}  // namespace

Context::Context(const weftPluginHost_v1* host, const Settings& settings) : host_(host), settings_(settings) {
  joinMpi();
}

Context::~Context() = default;

void Context::joinMpi() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    noJob_ = "MPI was already finalised in this process";
    return;
  }
  int provided = MPI_THREAD_SINGLE;
  if (initialized == 0) {
    if (!startedByLauncher()) {
      noJob_ =
          "MPI is not initialised and no MPI launcher started this process (no OMPI_COMM_WORLD_SIZE, PMIX_RANK "
          "or PMI_RANK in the environment): start the job with mpirun to use the mpi plugin";
      return;
    }
    // An Open MPI user who asks for WEFT_PLUGINS=mpi under mpirun expects it to work whether or not the
    // program calls MPI_Init itself, as with NCCL's or Horovod's MPI paths: initialise, and own it.
    if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided); rc != MPI_SUCCESS) {
      noJob_ = mpiFailure("MPI_Init_thread", rc);
      return;
    }
    gOwnsMpi = true;
    std::atexit(finalizeOwnedMpi);
    logf(host_, weftLogInfo, "initialised MPI (MPI_Init_thread: %s); the plugin finalises it at exit",
         threadLevelName(provided));
  } else {
    MPI_Query_thread(&provided);
  }
  serialize_ = provided < MPI_THREAD_MULTIPLE;
  if (serialize_) {
    logf(host_, weftLogInfo,
         "MPI provides %s, not MPI_THREAD_MULTIPLE: the plugin serialises its MPI calls with a lock (the "
         "application must not call MPI while Weft's streams work; MPI_Init_thread with MPI_THREAD_MULTIPLE "
         "avoids both)",
         threadLevelName(provided));
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank_);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize_);
  jobId_ = jobIdentity();
  if (worldSize_ < 2) {
    noJob_ = "MPI_COMM_WORLD has one process (started without mpirun?): no peer is reachable through MPI";
    return;
  }
  // The transport uses the upper half of the tag space of MPI_COMM_WORLD: the highest tag for hellos,
  // the rest for connections. Applications rarely use tags that high; see README.md.
  void* value = nullptr;
  int flag = 0;
  int tagUpperBound = 32767;  // the least MPI guarantees
  if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag) == MPI_SUCCESS && flag != 0) {
    tagUpperBound = *static_cast<int*>(value);
  }
  controlTag_ = tagUpperBound;
  firstDataTag_ = tagUpperBound / 2;
  lastDataTag_ = tagUpperBound - 1;
  nextTag_ = firstDataTag_;
  logf(host_, weftLogDebug, "MPI_COMM_WORLD rank %d of %d, job %016llx, transport tags %d to %d", worldRank_,
       worldSize_, static_cast<unsigned long long>(jobId_), firstDataTag_, controlTag_);
}

bool Context::mpiUsable() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

std::unique_lock<std::mutex> Context::mpiLock() {
  return serialize_ ? std::unique_lock<std::mutex>(mpiMutex_) : std::unique_lock<std::mutex>();
}

uint64_t Context::addListener(uint64_t token) {
  std::lock_guard<std::mutex> state(stateMutex_);
  uint64_t id = nextListener_++;
  listeners_[id] = token;
  return id;
}

void Context::removeListener(uint64_t listenerId) {
  std::lock_guard<std::mutex> state(stateMutex_);
  listeners_.erase(listenerId);
  hellos_.erase(listenerId);
}

int Context::nextDataTag() {
  // Tags only need to be unique per sending process: MPI matches on (source, tag, communicator).
  std::lock_guard<std::mutex> state(stateMutex_);
  int tag = nextTag_;
  nextTag_ = nextTag_ == lastDataTag_ ? firstDataTag_ : nextTag_ + 1;
  return tag;
}

bool Context::takeHello(uint64_t listenerId, Hello* hello, int* source) {
  std::lock_guard<std::mutex> state(stateMutex_);
  for (;;) {
    int flag = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    int rc;
    {
      auto mpi = mpiLock();
      rc = MPI_Improbe(MPI_ANY_SOURCE, controlTag_, MPI_COMM_WORLD, &flag, &message, &status);
    }
    if (rc != MPI_SUCCESS) throw std::runtime_error(mpiFailure("MPI_Improbe", rc));
    if (flag == 0) break;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    // Matched probes: another thread's probe cannot take this message between the probe and the receive.
    std::vector<unsigned char> raw(static_cast<size_t>(std::max(bytes, 1)));
    {
      auto mpi = mpiLock();
      rc = MPI_Mrecv(raw.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) throw std::runtime_error(mpiFailure("MPI_Mrecv", rc));
    Hello h{};
    if (bytes == static_cast<int>(sizeof(Hello)))
      std::copy(raw.begin(), raw.end(), reinterpret_cast<unsigned char*>(&h));
    auto listener = listeners_.find(h.listenerId);
    if (h.magic != kHelloMagic || listener == listeners_.end() || listener->second != h.token) {
      // A stray message on our tag, or a connector with the wrong job token: refuse it, go on.
      logf(host_, weftLogWarn, "refused a connection from MPI_COMM_WORLD rank %d (%d bytes, %s)",
           status.MPI_SOURCE, bytes,
           h.magic != kHelloMagic ? "not a hello" : "unknown listener or wrong job token");
      continue;
    }
    hellos_[h.listenerId].emplace_back(h, status.MPI_SOURCE);
  }
  auto waiting = hellos_.find(listenerId);
  if (waiting == hellos_.end() || waiting->second.empty()) return false;
  *hello = waiting->second.front().first;
  *source = waiting->second.front().second;
  waiting->second.pop_front();
  return true;
}

void Context::waitReady(int timeoutUs) {
  // MPI progresses only inside MPI calls, and offers no blocking wait with a timeout: nap briefly, so
  // that with more ranks than cores the peer we wait for gets to run.
  if (timeoutUs <= 0) return;
  std::this_thread::sleep_for(std::chrono::microseconds(std::min(timeoutUs, 50)));
}

void Context::finalizeOwnedMpi() {
  if (gOwnsMpi.exchange(false) && mpiUsable()) MPI_Finalize();
}

}  // namespace weft::mpi
