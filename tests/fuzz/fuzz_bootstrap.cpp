// The bootstrap's wire (core/bootstrap/bootstrap_wire.h, root.cpp, unique_id.cpp). The first byte picks what
// the rest is:
//   0: a weftUniqueId (zero-padded to its size), as weftCommInitRank receives it from the application;
//   1: an 8-byte job token, then hellos (each sizeof(wire::Hello) bytes) arriving at a root of that job;
//   2: nranks and rank (a byte each), then the byte stream a rank reads as the root's reply.
// Invariants: a decoded id re-encodes to an id that decodes the same; the root admits only hellos of this
// job with bounded blobs, one per rank, all with the same rank count, and never looks up a rank out of
// range; a reply gives exactly nranks bounded blobs, and a refusal carries a valid weftResult_t.
#include <cstring>
#include <vector>

#include "core/bootstrap/bootstrap_wire.h"
#include "core/bootstrap/unique_id.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace wire = weft::wire;

void uniqueId(const uint8_t* data, size_t size) {
  weftUniqueId id{};
  std::memcpy(id.internal, data, std::min(size, sizeof(id.internal)));
  weft::UniqueIdContent content;
  if (!weft::fuzz::accepts(weftInvalidArgument, [&] { content = weft::decodeUniqueId(id); })) return;
  FUZZ_CHECK(content.root.length > 0 && content.root.length <= sizeof(sockaddr_in6));
  weft::UniqueIdContent again;
  FUZZ_CHECK(
      weft::fuzz::accepts(weftSuccess, [&] { again = weft::decodeUniqueId(weft::encodeUniqueId(content)); }));
  FUZZ_CHECK(again.token == content.token && again.root.length == content.root.length);
  FUZZ_CHECK(std::memcmp(&again.root.storage, &content.root.storage, content.root.length) == 0);
}

// Mirrors runRoot's bookkeeping: the first admitted hello fixes nranks.
void hellos(const uint8_t* data, size_t size) {
  uint64_t token = 0;
  if (size < sizeof(token)) return;
  std::memcpy(&token, data, sizeof(token));
  int32_t nranks = -1;
  std::vector<bool> present;
  for (size_t at = sizeof(token); at + sizeof(wire::Hello) <= size; at += sizeof(wire::Hello)) {
    wire::Hello hello{};
    std::memcpy(&hello, data + at, sizeof(hello));
    const wire::HelloVerdict verdict = wire::checkHello(hello, token);
    const bool ours = hello.magic == wire::kBootstrapMagic && hello.version == wire::kBootstrapVersion;
    FUZZ_CHECK((verdict == wire::HelloVerdict::NotWeft) == !ours);
    if (verdict != wire::HelloVerdict::Accept) continue;
    FUZZ_CHECK(hello.token == token && hello.blobBytes <= wire::kMaxBlobBytes);
    const std::string problem = wire::helloProblem(hello, nranks, [&](int32_t r) {
      FUZZ_CHECK(nranks >= 0 && r >= 0 && r < nranks);  // runRoot indexes its ranks with r
      return static_cast<bool>(present[static_cast<size_t>(r)]);
    });
    if (!problem.empty()) continue;
    FUZZ_CHECK(hello.nranks >= 1 && hello.nranks <= wire::kMaxRanks);
    FUZZ_CHECK(nranks < 0 || hello.nranks == nranks);
    FUZZ_CHECK(hello.rank >= 0 && hello.rank < hello.nranks);
    if (nranks < 0) {
      nranks = hello.nranks;
      present.resize(static_cast<size_t>(nranks));
    }
    FUZZ_CHECK(!present[static_cast<size_t>(hello.rank)]);
    present[static_cast<size_t>(hello.rank)] = true;
  }
}

void reply(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const int nranks = 1 + data[0] % 64;
  const int rank = data[1] % nranks;
  size_t at = 2;
  // As recvAll: exactly n bytes, or weftRemoteError when the root closes the connection first.
  auto read = [&](void* p, size_t n) {
    if (n > size - at) weft::fail(weftRemoteError, "bootstrap peer closed the connection");
    if (n > 0) std::memcpy(p, data + at, n);
    at += n;
  };
  std::vector<weft::Blob> blobs;
  if (!weft::fuzz::accepts(weftSuccess, [&] { blobs = wire::readReply(read, nranks, rank); })) return;
  FUZZ_CHECK(blobs.size() == static_cast<size_t>(nranks));
  for (const weft::Blob& b : blobs) FUZZ_CHECK(b.size() <= wire::kMaxBlobBytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 3) {
    case 0:
      uniqueId(data + 1, size - 1);
      break;
    case 1:
      hellos(data + 1, size - 1);
      break;
    default:
      reply(data + 1, size - 1);
  }
  return 0;
}
