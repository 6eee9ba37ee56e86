#include "core/comm/peer_info.h"

#include <cstdint>
#include <cstring>

#include "core/common/error.h"

namespace weft {
namespace {

// CPU masks up to glibc's CPU_SETSIZE (1024 CPUs).
constexpr uint32_t kMaxCpuMaskWords = 16;

class Writer {
 public:
  explicit Writer(Blob& out) : out_(out) {}
  void u32(uint32_t v) { bytes(&v, sizeof(v)); }
  void text(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void bytes(const void* p, size_t n) {
    size_t at = out_.size();
    out_.resize(at + n);
    if (n > 0) std::memcpy(out_.data() + at, p, n);
  }

 private:
  Blob& out_;
};

class Reader {
 public:
  explicit Reader(const Blob& in) : in_(in) {}
  uint32_t u32() {
    uint32_t v = 0;
    bytes(&v, sizeof(v));
    return v;
  }
  std::string text() {
    uint32_t n = u32();
    if (n > 1024) fail(weftRemoteError, "peer info: string of {} bytes", n);
    std::string s(n, '\0');
    bytes(s.data(), n);
    return s;
  }
  void bytes(void* p, size_t n) {
    if (n > in_.size() - offset_) fail(weftRemoteError, "peer info is truncated");
    if (n > 0) std::memcpy(p, in_.data() + offset_, n);  // p may be null then (an empty vector's data())
    offset_ += n;
  }

 private:
  const Blob& in_;
  size_t offset_ = 0;
};

}  // namespace

Blob encodePeerInfo(const PeerInfo& info) {
  Blob blob;
  Writer w(blob);
  w.text(info.hostId);
  w.u32(static_cast<uint32_t>(info.pid));
  w.u32(static_cast<uint32_t>(info.transports.size()));
  for (const TransportHandle& t : info.transports) {
    w.text(t.name);
    w.bytes(t.handle.data(), t.handle.size());
  }
  w.u32(static_cast<uint32_t>(info.cpuMask.size()));
  w.bytes(info.cpuMask.data(), info.cpuMask.size() * sizeof(uint64_t));
  return blob;
}

PeerInfo decodePeerInfo(const Blob& blob) {
  Reader r(blob);
  PeerInfo info;
  info.hostId = r.text();
  info.pid = static_cast<int>(r.u32());
  uint32_t count = r.u32();
  if (count > 16) fail(weftRemoteError, "peer info lists {} transports", count);
  info.transports.resize(count);
  for (TransportHandle& t : info.transports) {
    t.name = r.text();
    r.bytes(t.handle.data(), t.handle.size());
  }
  const uint32_t words = r.u32();
  if (words > kMaxCpuMaskWords) fail(weftRemoteError, "peer info: a CPU mask of {} words", words);
  info.cpuMask.resize(words);
  r.bytes(info.cpuMask.data(), words * sizeof(uint64_t));
  return info;
}

}  // namespace weft
