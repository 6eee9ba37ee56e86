// Command-line options, spelled as nccl-tests spells them, plus commperf's own long options (--coll, --peer,
// --rounds, --json, --csv, --bounds, ...).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace commperf {

// A library run side by side with Weft.
enum class PeerKind { kMpi, kGloo };

// Where the buffers of every library come from (--memory): operator new aligned to a cache line (heap), plain
// malloc (as most C programs and NumPy allocate: 16-byte aligned, large blocks 16 bytes past a page), or
// weftMemAlloc, which the shm plugin's ranks map into each other.
enum class BufferSource { Heap, Malloc, Weft };

// One --fusion case: `calls` calls of `bytes` each (of each --fusion_coll collective), issued in one group.
struct FusionCase {
  int calls = 0;
  size_t bytes = 0;
  bool operator==(const FusionCase&) const = default;
};

// One --plan case: `calls` AllReduces of `bytes` each (recorded in a plan, and issued eagerly). The same
// shape as a fusion case.
using PlanCase = FusionCase;

struct Options {
  size_t minBytes = 8;
  size_t maxBytes = 64ull << 20;
  size_t stepFactor = 2;
  size_t stepBytes = 1ull << 20;  // used when stepFactor == 1
  int iters = 20;                 // timed iterations per size and library, split evenly over the rounds
  int warmupIters = 5;
  int rounds = 5;  // timing rounds per size; Weft and the peers take turns round by round
  bool check = true;
  int root = 0;
  std::vector<weftDataType_t> types{weftFloat32};
  std::vector<weftRedOp_t> ops{weftSum};
  std::vector<std::string> colls{"allreduce"};        // empty: no sweep (--coll none, or --fusion without --coll)
  std::vector<FusionCase> fusion;                     // --fusion, in the order given; empty: no fusion cases
  std::vector<std::string> fusionColls{"allreduce"};  // --fusion_coll: the collectives --fusion times, in order
  std::vector<PlanCase> plan;                         // --plan, in the order given; empty: no plan cases
  std::vector<PeerKind> peers;         // --peer, in the order given (the table's column order); empty: Weft alone
  std::string glooAllreduce = "ring";  // ring, bcube, ring_chunked, halving_doubling
  BufferSource memory = BufferSource::Heap;  // --memory: where every library's buffers come from
  bool peerInPlace = false;                  // --peer_in_place: with peers, also time Weft's in-place form
  bool touchInput = false;  // --touch_input: rewrite the input before each timed call of the sweep (untimed)
  int gapUs = 0;  // --gap_us: each timed call alone, after a barrier and this long of other work on every rank
  bool bounds = false;
  size_t boundsBytes = 256ull << 20;
  std::string jsonPath;            // empty: no JSON
  std::string csvPath;             // empty: no CSV
  std::string calibratePath;       // --calibrate: write a tuning file there (calibrate.h); empty: no calibration
  std::string calibrateTransport;  // --calibrate-transport: the transport the file's entries are for
  std::string choicesPath;         // --choices: time the tuner against every algorithm forced (choices.h)
  std::string commandLine;

  // Iterations in one round: iters spread over rounds, rounded up.
  int itersPerRound() const { return (iters + rounds - 1) / rounds; }
};

enum class ParseStatus { kRun, kHelp, kError };

struct ParseResult {
  ParseStatus status = ParseStatus::kRun;
  std::string error;  // set with kError
};

// Never exits and never prints: the caller (rank 0 only) reports.
ParseResult parseOptions(int argc, char** argv, Options& options);
std::string usage(const char* program);

// "64M" -> 67108864 (K, M, G are powers of 1024; a trailing B is allowed). False on garbage or overflow.
bool parseByteCount(const std::string& text, size_t& value);

// The sizes swept, in order.
std::vector<size_t> sweepSizes(const Options& options);

const char* peerName(PeerKind peer);  // "mpi", "gloo"

// --fusion's argument: "N:BYTES" or a comma list ("1000:4K,100:64K"), N >= 1, BYTES >= 8 (one element of every
// type). False with `error` set on anything else.
bool parseFusionList(const std::string& text, std::vector<FusionCase>& cases, std::string& error);

// --fusion_coll's argument: allreduce, allgather, reducescatter or a comma list of them, each once. False with
// `error` set on anything else.
bool parseFusionColls(const std::string& text, std::vector<std::string>& colls, std::string& error);

// --plan's argument: "N[:BYTES]" or a comma list ("100,1000:4K"), N >= 1, BYTES >= 8, BYTES 1K when left out.
// False with `error` set on anything else.
bool parsePlanList(const std::string& text, std::vector<PlanCase>& cases, std::string& error);

// --peer's argument: "none", one library or a comma list ("mpi,gloo"). False with `error` set on an unknown or
// empty name, a library named twice, or "none" listed with others.
bool parsePeerList(const std::string& text, std::vector<PeerKind>& peers, std::string& error);

}  // namespace commperf
