// Shared segments: anonymous memfds mapped by exactly two processes. memfd rather than shm_open: the segment
// never has a name in /dev/shm, so nothing is left behind when a rank is killed, and no other process can
// open it; it reaches the peer only as an fd passed over the connection's Unix socket.
#ifndef WEFT_PLUGINS_SHM_SEGMENT_H
#define WEFT_PLUGINS_SHM_SEGMENT_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace weft::shm {

// The page size the plugin assumes for touching and splitting mapped memory (x86-64 and arm64 base pages).
inline constexpr size_t kPageBytes = 4096;

// An mmap'ed range, unmapped when destroyed.
class Mapping {
 public:
  Mapping() = default;
  Mapping(void* data, size_t bytes) : data_(data), bytes_(bytes) {}
  ~Mapping() { reset(); }
  Mapping(Mapping&& other) noexcept : data_(other.data_), bytes_(other.bytes_) {
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  Mapping& operator=(Mapping&& other) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  void reset();

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Creates a memfd of `bytes`, allocates its pages (tmpfs would otherwise raise SIGBUS on a later touch when
// memory runs short), seals its size (a peer cannot shrink it under our mapping and fault us) and maps it
// with the pages already faulted in (first touch is slow: paying it here keeps it out of the first message).
// Returns the fd (the caller closes it) or -1 with *error set.
int createSegment(const char* name, size_t bytes, Mapping* mapping, std::string* error);

// 64 random bits for the keys and cookies written into segments; should getrandom fail, bits mixed from `seed`
// (an address of the caller's) and the pid, which only have to be unlikely elsewhere.
uint64_t randomWord(const void* seed);

// Maps a segment received from a peer after checking that it is exactly `bytes` long and sealed against
// shrinking; populate: fault every page in now (a peer's weftMemAlloc buffer is not: it may be large and
// used in part). Does not close fd. Returns false with *error set.
bool mapPeerSegment(int fd, size_t bytes, Mapping* mapping, std::string* error, bool populate = true);

// Touches each page of [data, data + bytes) once from this process. On a paravirtualised guest a process's
// first access to a page of a shared mapping costs about 15 us even where its page tables were filled
// (MAP_POPULATE above): setup pays it here rather than the first pass of messages or collectives through
// that memory. `write`: rewrite the byte read, for memory that only this process writes and nobody reads
// yet (a first write after a read would cost the same again).
void touchPages(void* data, size_t bytes, bool write);

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_SEGMENT_H
