// The bootstrap's messages. Every field is checked on receipt: magic, version, bounded lengths.
#pragma once

#include <cstdint>

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

}  // namespace weft::wire
