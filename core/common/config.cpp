#include "core/common/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>

#include "core/common/error.h"

namespace weft::config {

const std::vector<Variable>& variables() {
  static const std::vector<Variable> table = {
      {"WEFT_LOG_LEVEL", "warn", "trace, debug, info, warn, error or off"},
      {"WEFT_PLUGINS", nullptr,
       "comma list of plugins to load (e.g. tcp); ^name excludes; unset loads every plugin found"},
      {"WEFT_PLUGIN_PATH", nullptr, "colon list of extra folders searched for plugins after <libdir>/weft"},
      {"WEFT_ALGO", nullptr,
       "forces algorithms per collective and size range, e.g. allreduce:recursive_doubling:0-64K;allreduce:ring:"
       "64K-inf;broadcast:hierarchical (read at communicator creation; docs/tuning.md)"},
      {"WEFT_FUSION", nullptr,
       "fusion of grouped calls per collective, e.g. allreduce:size:32;allgather:auto;reducescatter:off (modes "
       "off, auto = 64 MB, size:<MB>, id, index; default auto; read at communicator creation)"},
      {"WEFT_FUSION_INDEX", nullptr,
       "AllReduce fusion by index list, e.g. 20,35: the group's AllReduces 0-19, 20-34 and the rest fuse apart"},
      {"WEFT_SUBGRAPH_REUSE", nullptr,
       "plans: unset or -1 reuses one compiled subgraph for identical operations up to 1000 of them, N up to N, "
       "0 never (read at weftPlanEnd)"},
      {"WEFT_STREAM_CAPACITY", "3", "plans: compiled operations one stream carries (read at weftPlanEnd)"},
      {"WEFT_MAX_STREAMS", "64", "plans: the most streams a plan may need (read at weftPlanEnd)"},
      {"WEFT_PLAN_THREADS", "-1",
       "plans: threads a plan runs its streams on besides the launching one; -1: the CPUs its host's ranks may "
       "use "
       "per rank, less one (read at weftPlanEnd)"},
      {"WEFT_SOCKET_IFNAME", nullptr,
       "interfaces for bootstrap and tcp: comma list of name prefixes, ^ excludes, = exact match"},
      {"WEFT_SOCKET_BUFFER", "4194304", "tcp socket send/receive buffer bytes (0: the kernel's autotuning)"},
      {"WEFT_SOCKET_FAMILY", nullptr, "tcp: AF_INET or AF_INET6 to force an address family"},
      {"WEFT_SOCKET_PAIR", "1",
       "tcp: 1 lets the two directions between two ranks share one socket (small exchanges faster); 0 keeps "
       "a socket per direction (large simultaneous Send/Recv faster)"},
      {"WEFT_SOCKET_CONGESTION", "auto",
       "tcp: auto (connections with both ends on this host get cubic, else reno, where the host's choice is bbr), "
       "host (the host's choice everywhere) or a congestion control's name for every socket"},
      {"WEFT_SOCKET_DEAD_PEER", "8",
       "tcp: seconds after which a peer host that stopped answering (keepalive probes, unacknowledged data) "
       "fails its connections; 0: the kernel's defaults (hours)"},
      {"WEFT_SHM_CMA", "1",
       "shm: 0 copies large messages through the ring instead of reading them with process_vm_readv"},
      {"WEFT_SHM_RING_BYTES", "524288", "shm: ring bytes per connection, a power of two from 64K to 1G"},
      {"WEFT_SHM_COLL", "1",
       "shm: 0 turns the node backend off (collectives of one-host communicators then run as messages)"},
      {"WEFT_SHM_STAGE_BYTES", "262144",
       "shm node backend: the largest input a ReduceScatter stages per rank (AllGather, AllToAll, Broadcast: "
       "at most 64K; AllReduce, Reduce: 32K; "
       "a ring of 8 times this per communicator); larger inputs go by CMA (alike on every rank)"},
      {"WEFT_SHM_CMA_COST", "measure",
       "shm: measure (the first collective of a node backend whose ranks each have a CPU times a 2M "
       "AllReduce by CMA against bounced through mapped memory in 512K pieces; AllReduces and Reduces of 512K-16M "
       "bounce only if that won), high (always bounce) or low (no bounce where every rank has a CPU); alike on "
       "every rank"},
      {"WEFT_SHM_REDUCE_ALL_BYTES", "16384",
       "shm node backend: AllReduce up to this size is reduced whole by every rank (one step)"},
      {"WEFT_CHECK", "0",
       "1: before each collective the ranks compare what they call (collective, count, type, op, root) and "
       "refuse a mismatch with weftInvalidUsage naming the ranks (costs one small exchange per call)"},
      {"WEFT_TIMEOUT", "600",
       "seconds any wait may last before the call returns weftTimeout (read at communicator creation)"},
      {"WEFT_STALL_WARN", "60",
       "seconds a rank may wait in one operation before it warns whom it waits for, again at 2x, 4x, ...; rank 0 "
       "adds which ranks have not reached the operation (0: off; read at communicator creation)"},
      {"WEFT_TUNING_FILE", nullptr,
       "JSON tuning file written by commperf --calibrate; its measurements replace the tuner's defaults "
       "(read at the first communicator; docs/tuning.md)"},
      {"WEFT_MPI_MAX_CALL_ELEMENTS", nullptr,
       "mpi: the most elements one MPI call carries (default INT_MAX); larger collectives go in pieces"},
      {"WEFT_HOST_ID", nullptr,
       "overrides this process's host identity (hostname/boot id), so tests can emulate several hosts"},
      {"WEFT_RANK", nullptr, "weftCommInitFromEnv: this process's rank (else OMPI_COMM_WORLD_RANK)"},
      {"WEFT_SIZE", nullptr, "weftCommInitFromEnv: number of ranks (else OMPI_COMM_WORLD_SIZE)"},
      {"WEFT_ROOT", nullptr, "weftCommInitFromEnv: host:port where rank 0 listens for the bootstrap"},
      {"WEFT_TOKEN", nullptr,
       "weftCommInitFromEnv: job token, 16 hex digits (default: derived from WEFT_ROOT, not secret)"},
  };
  return table;
}

namespace {

// Values from the tuning file, set by the tuner while other threads may already read settings.
struct TuningFileValues {
  std::mutex mutex;
  std::map<std::string, std::string, std::less<>> values;
};

TuningFileValues& tuningFileValues() {
  static TuningFileValues* values = new TuningFileValues();  // never destroyed: read until exit
  return *values;
}

}  // namespace

std::optional<Value> lookup(const char* name) {
  if (const char* value = std::getenv(name); value != nullptr) return Value{value, Source::Environment};
  {
    TuningFileValues& tuning = tuningFileValues();
    std::lock_guard lock(tuning.mutex);
    if (auto it = tuning.values.find(std::string_view(name)); it != tuning.values.end()) {
      return Value{it->second, Source::TuningFile};
    }
  }
  for (const Variable& v : variables()) {
    if (std::strcmp(v.name, name) == 0 && v.defaultValue != nullptr) return Value{v.defaultValue, Source::Default};
  }
  return std::nullopt;
}

void setFromTuningFile(const char* name, std::string value) {
  TuningFileValues& tuning = tuningFileValues();
  std::lock_guard lock(tuning.mutex);
  tuning.values.insert_or_assign(std::string(name), std::move(value));
}

void clearTuningFileValues() {
  TuningFileValues& tuning = tuningFileValues();
  std::lock_guard lock(tuning.mutex);
  tuning.values.clear();
}

const char* sourceName(Source s) {
  switch (s) {
    case Source::Default:
      return "default";
    case Source::Environment:
      return "environment";
    case Source::TuningFile:
      return "tuning file";
  }
  return "?";
}

std::optional<std::string> get(const char* name) {
  if (auto value = lookup(name)) return std::move(value->text);
  return std::nullopt;
}

std::string getOr(const char* name, const std::string& fallback) { return get(name).value_or(fallback); }

long getInt(const char* name, long fallback) {
  auto text = get(name);
  if (!text || text->empty()) return fallback;
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text->c_str(), &end, 10);
  // The whole text, not up to a NUL: a tuning file's JSON string may hold "\u0000" (found by tests/fuzz).
  if (errno != 0 || end != text->c_str() + text->size()) {
    fail(weftInvalidArgument, "{}='{}' is not an integer", name, *text);
  }
  return value;
}

}  // namespace weft::config
