#include "options.h"

#include <getopt.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>

#include "colls.h"
#include "types.h"

namespace commperf {

namespace {

enum LongOnly {
  kColl = 1000,
  kJson,
  kCsv,
  kPeer,
  kRounds,
  kBounds,
  kBoundsBytes,
  kGlooAllreduce,
  kFusion,
  kFusionColl,
  kPlan,
  kCalibrate,
  kCalibrateTransport,
  kChoices,
  kPeerInPlace,
  kTouchInput,
  kGapUs,
  kMemory
};

constexpr const char* kGlooAllreduceNames[] = {"ring", "bcube", "ring_chunked", "halving_doubling"};

const option kLongOptions[] = {
    {"minbytes", required_argument, nullptr, 'b'},
    {"maxbytes", required_argument, nullptr, 'e'},
    {"stepfactor", required_argument, nullptr, 'f'},
    {"stepbytes", required_argument, nullptr, 'i'},
    {"iters", required_argument, nullptr, 'n'},
    {"warmup_iters", required_argument, nullptr, 'w'},
    {"check", required_argument, nullptr, 'c'},
    {"datatype", required_argument, nullptr, 'd'},
    {"op", required_argument, nullptr, 'o'},
    {"root", required_argument, nullptr, 'r'},
    {"coll", required_argument, nullptr, kColl},
    {"json", required_argument, nullptr, kJson},
    {"csv", required_argument, nullptr, kCsv},
    {"peer", required_argument, nullptr, kPeer},
    {"rounds", required_argument, nullptr, kRounds},
    {"bounds", no_argument, nullptr, kBounds},
    {"bounds_bytes", required_argument, nullptr, kBoundsBytes},
    {"gloo_allreduce", required_argument, nullptr, kGlooAllreduce},
    {"fusion", required_argument, nullptr, kFusion},
    {"fusion_coll", required_argument, nullptr, kFusionColl},
    {"plan", required_argument, nullptr, kPlan},
    {"calibrate", required_argument, nullptr, kCalibrate},
    {"calibrate-transport", required_argument, nullptr, kCalibrateTransport},
    {"choices", required_argument, nullptr, kChoices},
    {"peer_in_place", no_argument, nullptr, kPeerInPlace},
    {"touch_input", no_argument, nullptr, kTouchInput},
    {"gap_us", required_argument, nullptr, kGapUs},
    {"memory", required_argument, nullptr, kMemory},
    {"help", no_argument, nullptr, 'h'},
    {nullptr, 0, nullptr, 0},
};

bool parseInt(const std::string& text, long long low, long long high, long long& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty() && value >= low && value <= high;
}

// "a,b,c" -> {"a", "b", "c"}; empty items are kept (the callers say what is wrong with them).
std::vector<std::string> commaSeparated(const std::string& text) {
  std::vector<std::string> items;
  for (size_t pos = 0;;) {
    size_t comma = text.find(',', pos);
    items.push_back(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) return items;
    pos = comma + 1;
  }
}

std::string joinCommandLine(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i) line += ' ';
    line += argv[i];
  }
  return line;
}

}  // namespace

bool parseByteCount(const std::string& text, size_t& value) {
  std::string digits = text;
  if (!digits.empty() && (digits.back() == 'B' || digits.back() == 'b')) digits.pop_back();
  unsigned shift = 0;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      default:
        break;
    }
    if (shift) digits.pop_back();
  }
  unsigned long long number = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, number);
  if (digits.empty() || ec != std::errc() || ptr != end) return false;
  if (number > (std::numeric_limits<size_t>::max() >> shift)) return false;
  value = static_cast<size_t>(number) << shift;
  return true;
}

ParseResult parseOptions(int argc, char** argv, Options& options) {
  options.commandLine = joinCommandLine(argc, argv);
  auto error = [](std::string message) { return ParseResult{ParseStatus::kError, std::move(message)}; };
  opterr = 0;
  optind = 0;  // glibc: 0 resets getopt's whole state, so that a second parse (the unit test's) starts afresh
  int option;
  bool collGiven = false;
  while ((option = getopt_long(argc, argv, ":b:e:f:i:n:w:c:d:o:r:h", kLongOptions, nullptr)) != -1) {
    std::string arg = optarg ? optarg : "";
    long long number = 0;
    switch (option) {
      case 'b':
        if (!parseByteCount(arg, options.minBytes)) return error("invalid --minbytes '" + arg + "'");
        break;
      case 'e':
        if (!parseByteCount(arg, options.maxBytes)) return error("invalid --maxbytes '" + arg + "'");
        break;
      case 'f':
        if (!parseInt(arg, 1, 1 << 20, number)) return error("invalid --stepfactor '" + arg + "' (integer >= 1)");
        options.stepFactor = static_cast<size_t>(number);
        break;
      case 'i':
        if (!parseByteCount(arg, options.stepBytes) || options.stepBytes == 0)
          return error("invalid --stepbytes '" + arg + "' (size > 0)");
        break;
      case 'n':
        if (!parseInt(arg, 1, 1 << 30, number)) return error("invalid --iters '" + arg + "' (integer >= 1)");
        options.iters = static_cast<int>(number);
        break;
      case 'w':
        if (!parseInt(arg, 0, 1 << 30, number))
          return error("invalid --warmup_iters '" + arg + "' (integer >= 0)");
        options.warmupIters = static_cast<int>(number);
        break;
      case 'c':
        if (!parseInt(arg, 0, 1, number)) return error("invalid --check '" + arg + "' (0 or 1)");
        options.check = number == 1;
        break;
      case 'd':
        if (arg == "all") {
          options.types.clear();
          for (int t = 0; t < WEFT_NUM_DATA_TYPES; ++t) options.types.push_back(static_cast<weftDataType_t>(t));
        } else if (auto type = parseType(arg)) {
          options.types = {*type};
        } else {
          return error("unknown --datatype '" + arg + "'");
        }
        break;
      case 'o':
        if (arg == "all") {
          options.ops.clear();
          for (int o = 0; o < WEFT_NUM_RED_OPS; ++o) options.ops.push_back(static_cast<weftRedOp_t>(o));
        } else if (auto op = parseOp(arg)) {
          options.ops = {*op};
        } else {
          return error("unknown --op '" + arg + "'");
        }
        break;
      case 'r':
        if (!parseInt(arg, 0, std::numeric_limits<int>::max(), number))
          return error("invalid --root '" + arg + "' (integer >= 0)");
        options.root = static_cast<int>(number);
        break;
      case kColl:
        collGiven = true;
        if (arg == "all" || arg == "none") {
          options.colls.clear();
          if (arg == "all")
            for (const CollDesc& desc : allColls()) options.colls.push_back(desc.name);
        } else if (findColl(arg)) {
          options.colls = {arg};
        } else {
          return error("unknown --coll '" + arg + "'");
        }
        break;
      case kJson:
        if (arg.empty()) return error("--json needs a file name");
        options.jsonPath = arg;
        break;
      case kCsv:
        if (arg.empty()) return error("--csv needs a file name");
        options.csvPath = arg;
        break;
      case kCalibrate:
        if (arg.empty()) return error("--calibrate needs a file name");
        options.calibratePath = arg;
        break;
      case kCalibrateTransport:
        if (arg.empty()) return error("--calibrate-transport needs a transport name");
        options.calibrateTransport = arg;
        break;
      case kChoices:
        if (arg.empty()) return error("--choices needs a file name");
        options.choicesPath = arg;
        break;
      case kPeer: {
        std::string message;
        if (!parsePeerList(arg, options.peers, message)) return error(message);
        break;
      }
      case kRounds:
        if (!parseInt(arg, 1, 1 << 20, number)) return error("invalid --rounds '" + arg + "' (integer >= 1)");
        options.rounds = static_cast<int>(number);
        break;
      case kBounds:
        options.bounds = true;
        break;
      case kPeerInPlace:
        options.peerInPlace = true;
        break;
      case kTouchInput:
        options.touchInput = true;
        break;
      case kGapUs:
        if (!parseInt(arg, 0, 1000000, number)) return error("invalid --gap_us '" + arg + "' (0 to 1000000)");
        options.gapUs = static_cast<int>(number);
        break;
      case kMemory:
        if (arg == "heap") {
          options.memory = BufferSource::Heap;
        } else if (arg == "malloc") {
          options.memory = BufferSource::Malloc;
        } else if (arg == "weft") {
          options.memory = BufferSource::Weft;
        } else {
          return error("invalid --memory '" + arg + "' (heap, malloc or weft)");
        }
        break;
      case kBoundsBytes:
        // At least a page per thread and array; the arrays are float, so a multiple of 4.
        if (!parseByteCount(arg, options.boundsBytes) || options.boundsBytes < 4096)
          return error("invalid --bounds_bytes '" + arg + "' (size >= 4K)");
        options.boundsBytes &= ~size_t{3};
        break;
      case kGlooAllreduce: {
        auto known = std::find(std::begin(kGlooAllreduceNames), std::end(kGlooAllreduceNames), arg);
        if (known == std::end(kGlooAllreduceNames))
          return error("unknown --gloo_allreduce '" + arg + "' (ring, bcube, ring_chunked or halving_doubling)");
        options.glooAllreduce = arg;
        break;
      }
      case kFusion: {
        std::string message;
        if (!parseFusionList(arg, options.fusion, message)) return error(message);
        break;
      }
      case kFusionColl: {
        std::string message;
        if (!parseFusionColls(arg, options.fusionColls, message)) return error(message);
        break;
      }
      case kPlan: {
        std::string message;
        if (!parsePlanList(arg, options.plan, message)) return error(message);
        break;
      }
      case 'h':
        return ParseResult{ParseStatus::kHelp, {}};
      case ':':
        return error(std::string("option '") + argv[optind - 1] + "' needs an argument");
      default:
        // A short option sets optopt to its letter; a long one that takes no argument but got one sets it to
        // the option's value (>= kColl), which is no letter to print.
        if (optopt > 0 && optopt < 128 && std::isprint(optopt))
          return error(std::string("unknown option '-") + static_cast<char>(optopt) + "'");
        if (optopt >= kColl) return error(std::string("option '") + argv[optind - 1] + "' takes no argument");
        return error(std::string("unknown option '") + argv[optind - 1] + "'");
    }
  }
  if (optind < argc) return error(std::string("unexpected argument '") + argv[optind] + "'");
  // --fusion, --plan, --calibrate and --choices run their cases instead of the size sweep, unless --coll asks
  // for both.
  const bool ownCases = !options.fusion.empty() || !options.plan.empty() || !options.calibratePath.empty() ||
                        !options.choicesPath.empty();
  if (ownCases && !collGiven) options.colls.clear();
  if (options.colls.empty() && !options.bounds && !ownCases)
    return error("--coll none runs nothing without --bounds, --fusion, --plan, --calibrate or --choices");
  if (options.minBytes > options.maxBytes) return error("--minbytes is larger than --maxbytes");
  if (options.minBytes == 0 && options.stepFactor > 1)
    return error("--minbytes 0 needs --stepfactor 1 (a factor never grows 0)");
  return ParseResult{};
}

std::string usage(const char* program) {
  std::string text = std::string("Usage: ") + program + " [options]\n";
  text +=
      "  -b, --minbytes <size>      smallest size (default 8; suffixes K, M, G)\n"
      "  -e, --maxbytes <size>      largest size (default 64M)\n"
      "  -f, --stepfactor <n>       multiply the size by n each step (default 2)\n"
      "  -i, --stepbytes <size>     add this to the size each step when -f is 1 (default 1M)\n"
      "  -n, --iters <n>            timed iterations per size and library (default 20), split over the rounds\n"
      "  -w, --warmup_iters <n>     untimed iterations per size and library (default 5)\n"
      "      --rounds <n>           timing rounds per size (default 5): Weft and the peers take turns, in\n"
      "                             an order that changes from round to round so that each goes first,\n"
      "                             and runs right after each other one, equally often (over n rounds for\n"
      "                             n libraries and forms, 2n when n is odd); times are the median over\n"
      "                             rounds, with the min-max spread\n"
      "  -c, --check <0|1>          check results once per size (default 1)\n"
      "  -d, --datatype <type>      int8 uint8 int32 uint32 int64 uint64 half|float16 bfloat16\n"
      "                             float|float32 double|float64, or all (default float)\n"
      "  -o, --op <op>              sum prod max min avg, or all (default sum)\n"
      "  -r, --root <rank>          root of broadcast and reduce (default 0)\n"
      "      --coll <name>          allreduce allgather reducescatter alltoall broadcast reduce\n"
      "                             sendrecv, all, or none (default allreduce)\n"
      "      --peer <libs>          none, mpi (Open MPI), gloo, or a comma list (mpi,gloo): run the same sweep\n"
      "                             through each library, taking turns with Weft round by round, and print\n"
      "                             them side by side with the ratio peer time / Weft time for each\n"
      "      --peer_in_place        with --peer: also time the in-place forms, in the same rounds: Weft's,\n"
      "                             and MPI's (MPI_IN_PLACE) for allreduce, allgather, reducescatter and\n"
      "                             reduce (MPI_Bcast's one buffer is Weft's in-place Broadcast); in the\n"
      "                             JSON and CSV (in_place, in_place_ratio), the table compares out of place\n"
      "      --touch_input          the sweep rewrites every cache line of the input before each call, outside\n"
      "                             the timed part, as if the application had just computed it: the call\n"
      "                             then reads lines dirty in this rank's cache, not ones its peers read last\n"
      "                             time (which flatters a peer's direct reads: process_vm_readv, MPI's CMA)\n"
      "      --gap_us <us>          time every call alone: before each, a barrier across the ranks and <us>\n"
      "                             microseconds of spinning on every rank (other work), so that a call pays\n"
      "                             its whole latency instead of overlapping the one before (default 0: calls\n"
      "                             back to back); the time still includes the barrier's exit skew\n"
      "      --memory <kind>        where the buffers of every library come from: heap (default: operator\n"
      "                             new, cache-line aligned), malloc (16-byte aligned; large blocks start\n"
      "                             16 bytes past a page, as most C programs' and NumPy's do), or weft\n"
      "                             (weftMemAlloc, which the shm plugin's ranks map into each other)\n"
      "      --gloo_allreduce <alg> ring, bcube (gloo::allreduce), ring_chunked, halving_doubling (classic\n"
      "                             algorithm classes) (default ring)\n"
      "      --bounds               first measure memcpy and c=a+b bandwidth (1 and all threads) and a\n"
      "                             cache-line ping-pong between two processes (rank 0 only)\n"
      "      --bounds_bytes <size>  buffer size for --bounds (default 256M)\n"
      "      --fusion <N:size,...>  time N allreduces of size bytes each in one group (weftGroupStart/End)\n"
      "                             on N separate buffers: fused (weftFusionAuto), unfused (weftFusionOff),\n"
      "                             one allreduce of N*size, and each --peer making N calls; launches per\n"
      "                             group from weftCommGetStats. A comma list runs several cases\n"
      "                             (1000:4K,100:64K). Replaces the size sweep unless --coll is given\n"
      "      --fusion_coll <names>  the collectives --fusion times: allreduce, allgather, reducescatter, or a\n"
      "                             comma list (default allreduce); N calls of size bytes of each rank's input\n"
      "                             (allgather) or output (reducescatter), against one call of N*size\n"
      "      --calibrate <file>     measure the tuner's cost model (every flat algorithm, forced) and write\n"
      "                             the tuning file WEFT_TUNING_FILE loads (docs/tuning.md)\n"
      "      --calibrate-transport <name>  the transport those entries are for (default: WEFT_PLUGINS when it\n"
      "                             names one transport, else shm)\n"
      "      --choices <file>       time the tuner's choice against every algorithm forced (allreduce,\n"
      "                             reducescatter, allgather; the sweep's sizes), taking turns in one launch;\n"
      "                             write the figures to file as JSON (perf/tuning/check_choices.py)\n"
      "      --json <file>          also write every figure as JSON to file\n"
      "      --csv <file>           also write every figure as CSV to file\n"
      "  -h, --help                 this text\n";
  return text;
}

const char* peerName(PeerKind peer) { return peer == PeerKind::kGloo ? "gloo" : "mpi"; }

bool parseFusionColls(const std::string& text, std::vector<std::string>& colls, std::string& error) {
  const std::string known = " (allreduce, allgather, reducescatter, or a comma list of them)";
  std::vector<std::string> list;
  for (const std::string& name : commaSeparated(text)) {
    if (name != "allreduce" && name != "allgather" && name != "reducescatter") {
      error.assign("unknown collective '").append(name).append("' in --fusion_coll '").append(text).append("'");
      error += known;
      return false;
    }
    if (std::find(list.begin(), list.end(), name) != list.end()) {
      error.assign("--fusion_coll '").append(text).append("' names ").append(name).append(" twice");
      return false;
    }
    list.push_back(name);
  }
  colls = list;
  return true;
}

// Error messages, built once when a command line is wrong: plain concatenation reads best, and its temporary
// strings cost nothing that matters there.
// NOLINTBEGIN(performance-inefficient-string-concatenation)
bool parsePeerList(const std::string& text, std::vector<PeerKind>& peers, std::string& error) {
  const std::string known = " (none, mpi, gloo, or a comma list such as mpi,gloo)";
  const std::vector<std::string> names = commaSeparated(text);
  std::vector<PeerKind> list;
  for (const std::string& name : names) {
    if (name.empty()) {
      error = "empty library name in --peer '" + text + "'" + known;
      return false;
    }
    if (name == "none") {
      // "none,mpi" contradicts itself: say so rather than guess which half was meant.
      if (names.size() == 1) break;
      error = "--peer '" + text + "': none means Weft alone and cannot be listed with other libraries" + known;
      return false;
    }
    std::optional<PeerKind> kind;
    if (name == "mpi") kind = PeerKind::kMpi;
    if (name == "gloo") kind = PeerKind::kGloo;
    if (!kind) {
      // A single name reads as it always did: "unknown --peer 'nccl'".
      error = names.size() == 1 ? "unknown --peer '" + name + "'" + known
                                : "unknown library '" + name + "' in --peer '" + text + "'" + known;
      return false;
    }
    if (std::find(list.begin(), list.end(), *kind) != list.end()) {
      error = "--peer '" + text + "' names " + name + " twice" + known;
      return false;
    }
    list.push_back(*kind);
  }
  peers = std::move(list);
  return true;
}

namespace {

// "N:BYTES" items, comma separated. defaultBytes > 0 makes ":BYTES" optional.
bool parseCaseList(const std::string& text, const char* option, size_t defaultBytes, const std::string& expected,
                   std::vector<FusionCase>& cases, std::string& error) {
  std::vector<FusionCase> list;
  for (size_t pos = 0;;) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t colon = item.find(':');
    long long calls = 0;
    size_t bytes = defaultBytes;
    bool ok = colon != std::string::npos || defaultBytes > 0;
    ok = ok && parseInt(item.substr(0, colon), 1, 1 << 20, calls);
    if (ok && colon != std::string::npos) ok = parseByteCount(item.substr(colon + 1), bytes);
    if (!ok || bytes < 8) {
      error = std::string("invalid ") + option + " '" + text + "'" + (item == text ? "" : ": '" + item + "'") +
              expected;
      return false;
    }
    // N * BYTES must fit size_t (--fusion's single call has a buffer of that size).
    if (bytes > std::numeric_limits<size_t>::max() / static_cast<size_t>(calls)) {
      error = std::string("invalid ") + option + " '" + text + "': " + item + " is too large" + expected;
      return false;
    }
    list.push_back({static_cast<int>(calls), bytes});
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  cases = std::move(list);
  return true;
}
// NOLINTEND(performance-inefficient-string-concatenation)

}  // namespace

bool parseFusionList(const std::string& text, std::vector<FusionCase>& cases, std::string& error) {
  return parseCaseList(text, "--fusion", 0,
                       " (N:BYTES or a comma list such as 1000:4K,100:64K; N >= 1, BYTES >= 8)", cases, error);
}

bool parsePlanList(const std::string& text, std::vector<PlanCase>& cases, std::string& error) {
  return parseCaseList(text, "--plan", 1024,
                       " (N[:BYTES] or a comma list such as 100,1000:4K; N >= 1, BYTES >= 8, default 1K)", cases,
                       error);
}

std::vector<size_t> sweepSizes(const Options& options) {
  std::vector<size_t> sizes;
  for (size_t size = options.minBytes; size <= options.maxBytes;) {
    sizes.push_back(size);
    size_t next = options.stepFactor > 1 ? size * options.stepFactor : size + options.stepBytes;
    if (next <= size || (options.stepFactor > 1 && next / options.stepFactor != size)) break;  // overflow
    size = next;
  }
  return sizes;
}

}  // namespace commperf
