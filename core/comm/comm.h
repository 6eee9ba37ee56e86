// The communicator behind weftComm_t.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/comm/backend.h"
#include "core/comm/channel_storage.h"
#include "core/comm/connections.h"
#include "core/comm/control_channel.h"
#include "core/comm/lane.h"
#include "core/comm/peer_info.h"
#include "core/tuner/tuner.h"
#include "fusion/fusion_config.h"
#include "fusion/plan.h"
#include "topology/host_layout.h"

struct weftComm {
  static constexpr uint32_t kLiveMagic = 0x434f4d4d;  // "COMM"; cleared on destroy
  uint32_t magic = kLiveMagic;
  int rank = 0;
  int nranks = 0;
  uint64_t token = 0;
  std::string hostId;
  std::vector<weft::PeerInfo> peers;
  std::unique_ptr<weft::Connections> connections;
  std::unique_ptr<weft::ControlChannel> control;  // after connections: destroyed before them
  weft::HostLayout hosts;                         // which ranks share a host (from the peers' host identities)
  weft::Tuner tuner;                   // from WEFT_ALGO and WEFT_TUNING_FILE when the communicator was made
  std::chrono::seconds timeout{600};   // WEFT_TIMEOUT when the communicator was made
  std::chrono::seconds stallWarn{60};  // WEFT_STALL_WARN (core/comm/stall_report.h); 0: off
  size_t hostCpus = 0;                 // CPUs the ranks of this rank's host may run on between them (0: not known)
  bool hostCpusShared = false;         // this host's ranks outnumber hostCpus (alike on every rank of the host)
  bool linksCopyOnce = false;  // some pair of ranks uses a same-host-only transport (shm), alike on every rank
  int spinRounds = 64;         // passes a waiting rank makes before it yields (waitSpinRounds, idle_wait.h)
  bool checkCalls = false;     // WEFT_CHECK when the communicator was made (core/collectives/check_calls.h)
  uint64_t checkedCalls = 0;   // collectives checked so far (under the turn)

  // Set up at the first collective: a plugin that runs whole collectives (null when none is usable).
  bool backendTried = false;
  std::unique_ptr<weft::Backend> backend;
  std::vector<weftBackendOp_v1> backendOps;          // a run of independent calls handed to it (under the turn)
  std::vector<weftBackendBuffer_v1> backendBuffers;  // a fused call's buffer list handed to it (under the turn)

  // Operations run in the order they were issued (see core/comm/ordering.h).
  std::mutex orderMutex;  // only for sleeping: the counters are atomic
  std::condition_variable orderChanged;
  std::atomic<uint64_t> issued{0};    // tickets handed out
  std::atomic<uint64_t> executed{0};  // tickets finished
  std::atomic<int> orderWaiters{0};   // threads asleep (or about to be) on orderChanged

  // Tags carried by messages: collectives are numbered in issue order on their lane (the same on every
  // rank), so a message from a different collective is caught on receipt. Send/Recv number messages per peer.
  std::vector<uint32_t> sentTo, receivedFrom;

  // What collectives keep between calls when no plan stream runs them (core/comm/lane.h): their numbering,
  // transfers, scratch and fusion buffers (used under the turn).
  weft::LaneState mainLane{weft::kCollectiveChannel};

  // Messages a rank sends itself (Send/Recv to self inside a group), and what the CommChannels of the other
  // channel ids keep between operations (core/comm/channel_storage.h); the collective channel's are mainLane's.
  std::deque<std::vector<unsigned char>> selfMessages[weft::kNumChannels];
  weft::ChannelStorage channelStorage[weft::kNumChannels];

  // Fusion of grouped calls (fusion/): the settings.
  weft::FusionSettings fusion;

  // Set while weftPlanBegin/End record the communicator's calls (fusion/plan.h).
  weft::RecorderSlot recording;
  weft::PlanRegistry plans;

  // weftCommGetStats.
  std::atomic<uint64_t> opsSubmitted{0};
  std::atomic<uint64_t> collectivesLaunched{0};
  std::atomic<uint64_t> bytesFused{0};

  std::atomic<bool> aborted{false};
  std::atomic<bool> failed{false};  // asyncError is set
  std::mutex errorMutex;
  weftResult_t asyncError = weftSuccess;
  std::string asyncErrorMessage;

  // Records the first failure; later operations on this communicator fail with it. True for the first.
  bool setError(weftResult_t code, const std::string& message);
  // setError, and when this failure is the first, tells the other ranks (control channel) so that their
  // waits end too. Only under the turn: it uses the connections.
  void failAndTell(weftResult_t code, const std::string& message);
  // Throws the recorded failure, if any. Every call asks: the common answer takes two loads and no call.
  void throwIfFailed() {
    if (aborted.load(std::memory_order_acquire) || failed.load(std::memory_order_acquire)) throwFailure();
  }

 private:
  void throwFailure();
};

namespace weft {
// Throws weftInvalidArgument unless comm is a live communicator.
void requireComm(const weftComm* comm, const char* argument = "comm");
}  // namespace weft
