#include "shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U  // Linux 6.3; older kernels reject it and we retry without
#endif

namespace weft::shm {

namespace {

constexpr int kSizeSeals = F_SEAL_SHRINK | F_SEAL_GROW;

std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

bool mapShared(int fd, size_t bytes, Mapping* mapping, std::string* error, bool populate = true) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
  if (data == MAP_FAILED) {
    *error = errnoText("mmap of the segment failed");
    return false;
  }
  *mapping = Mapping(data, bytes);
  return true;
}

}  // namespace

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void Mapping::reset() {
  if (data_ != nullptr) munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

int createSegment(const char* name, size_t bytes, Mapping* mapping, std::string* error) {
  // MFD_NOEXEC_SEAL keeps newer kernels from warning about executable memfds.
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
  if (fd < 0 && errno == EINVAL) fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *error = errnoText("memfd_create failed");
    return -1;
  }
  bool ok = false;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    *error = errnoText("ftruncate of the segment failed");
  } else if (int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    errno = err;
    *error = errnoText("allocating the segment failed (shared memory exhausted?)");
  } else if (fcntl(fd, F_ADD_SEALS, kSizeSeals | F_SEAL_SEAL) != 0) {
    *error = errnoText("sealing the segment failed");
  } else {
    ok = mapShared(fd, bytes, mapping, error);
  }
  if (!ok) {
    close(fd);
    return -1;
  }
  return fd;
}

void touchPages(void* data, size_t bytes, bool write) {
  auto* bytesAt = static_cast<volatile unsigned char*>(data);
  for (size_t at = 0; at < bytes; at += kPageBytes) {
    const unsigned char value = bytesAt[at];
    if (write) bytesAt[at] = value;
  }
}

bool mapPeerSegment(int fd, size_t bytes, Mapping* mapping, std::string* error, bool populate) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = errnoText("fstat of the peer's segment failed");
    return false;
  }
  if (!S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) != bytes) {
    *error = "the peer's segment is " + std::to_string(static_cast<long long>(st.st_size)) + " bytes, expected " +
             std::to_string(bytes);
    return false;
  }
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    *error = "the peer's segment is not sealed against shrinking";
    return false;
  }
  return mapShared(fd, bytes, mapping, error, populate);
}

uint64_t randomWord(const void* seed) {
  uint64_t word = 0;
  if (getrandom(&word, sizeof(word), 0) != static_cast<ssize_t>(sizeof(word))) {
    word = reinterpret_cast<uint64_t>(seed) ^ (static_cast<uint64_t>(getpid()) << 32) ^ 0x9e3779b97f4a7c15ULL;
  }
  return word;
}

}  // namespace weft::shm
