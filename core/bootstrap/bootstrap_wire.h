// The bootstrap's messages. Every field is checked on receipt: magic, version, bounded lengths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/bootstrap/bootstrap.h"

namespace weft::wire {

constexpr uint32_t kBootstrapMagic = 0x57425354;  // "WBST"
constexpr uint32_t kBootstrapVersion = 1;
constexpr uint32_t kMaxBlobBytes = 64 * 1024;
constexpr int32_t kMaxRanks = 1 << 20;

struct Hello {
  uint32_t magic;
  uint32_t version;
  uint64_t token;
  int32_t nranks;
  int32_t rank;
  uint32_t blobBytes;
  uint32_t reserved;
};

// Reply header; on status 0 it is followed by nranks (uint32 length, blob) pairs; otherwise by
// messageBytes of text saying what was wrong.
struct Reply {
  uint32_t magic;
  int32_t status;  // a weftResult_t
  int32_t nranks;
  uint32_t messageBytes;
};

// The checks of what arrives, kept apart from the sockets (root.cpp) so that tests/fuzz can run them.

// The root's check of a hello's header, before it reads the blob.
enum class HelloVerdict { Accept, NotWeft, WrongToken, OversizedBlob };
HelloVerdict checkHello(const Hello& hello, uint64_t token);

// Why an accepted hello cannot join: `nranks` is what the first rank said (-1 before it), `joined(r)` says
// whether rank r (always 0 <= r < nranks) is in already. Empty when it may join.
std::string helloProblem(const Hello& hello, int32_t nranks, const std::function<bool(int32_t)>& joined);

// A rank's reading of the root's reply: `read` fills exactly n bytes or throws. Returns every rank's blob;
// throws weftRemoteError for a malformed reply, the root's status when it refused this rank.
std::vector<Blob> readReply(const std::function<void(void*, size_t)>& read, int nranks, int rank);

}  // namespace weft::wire
