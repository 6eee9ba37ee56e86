#include "shm_cma.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace weft::shm {

int cmaSelfTest() {
  constexpr uint64_t kCookie = 0x5ca1ab1e0ddba11ULL;
  volatile uint64_t source = kCookie;  // volatile: it must really be in memory to be read from outside
  return cmaProbe(getpid(), reinterpret_cast<uint64_t>(&source), kCookie);
}

void allowPeersToRead() { (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); }

int cmaProbe(pid_t pid, uint64_t address, uint64_t expected) {
  uint64_t value = 0;
  if (int err = cmaRead(pid, &value, address, sizeof(value)); err != 0) return err;
  return value == expected ? 0 : EIO;
}

int cmaRead(pid_t pid, void* dst, uint64_t address, size_t n) {
  auto* out = static_cast<unsigned char*>(dst);
  size_t done = 0;
  while (done < n) {
    iovec local{out + done, n - done};
    // An address in the peer's process: the kernel follows it there, this process never does.
    iovec remote{reinterpret_cast<void*>(address + done), n - done};  // NOLINT(performance-no-int-to-ptr)
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (got == 0) return EFAULT;  // partial reads stop at an unmapped page: no progress means none is left
    done += static_cast<size_t>(got);
  }
  return 0;
}

int cmaWrite(pid_t pid, uint64_t address, const void* src, size_t n) {
  const auto* in = static_cast<const unsigned char*>(src);
  size_t done = 0;
  while (done < n) {
    iovec local{const_cast<unsigned char*>(in + done), n - done};
    // An address in the peer's process: the kernel follows it there, this process never does.
    iovec remote{reinterpret_cast<void*>(address + done), n - done};  // NOLINT(performance-no-int-to-ptr)
    ssize_t put = process_vm_writev(pid, &local, 1, &remote, 1, 0);
    if (put < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (put == 0) return EFAULT;
    done += static_cast<size_t>(put);
  }
  return 0;
}

namespace {

// A position in a list of ranges, handing out the next ones (at most IOV_MAX per call).
class RangeCursor {
 public:
  RangeCursor(const iovec* ranges, size_t count) : ranges_(ranges), count_(count) { skipEmpty(); }
  bool done() const { return first_ == count_; }
  // Fills batch with the next ranges (at most max, at most `limit` bytes); returns how many.
  size_t next(iovec* batch, size_t max, size_t limit, size_t* bytes) const {
    size_t n = 0;
    *bytes = 0;
    for (size_t i = first_; i < count_ && n < max && *bytes < limit; ++i) {
      size_t skip = i == first_ ? skipped_ : 0;
      size_t length = std::min(ranges_[i].iov_len - skip, limit - *bytes);
      batch[n++] = {static_cast<unsigned char*>(ranges_[i].iov_base) + skip, length};
      *bytes += length;
    }
    return n;
  }
  void advance(size_t bytes) {
    while (first_ < count_ && bytes >= ranges_[first_].iov_len - skipped_) {
      bytes -= ranges_[first_].iov_len - skipped_;
      ++first_;
      skipped_ = 0;
    }
    skipped_ += bytes;
    skipEmpty();
  }

 private:
  void skipEmpty() {
    while (first_ < count_ && ranges_[first_].iov_len == skipped_) {
      ++first_;
      skipped_ = 0;
    }
  }
  const iovec* ranges_;
  size_t count_;
  size_t first_ = 0;    // the first range not yet done
  size_t skipped_ = 0;  // bytes of it already done
};

}  // namespace

int cmaList(pid_t pid, bool write, const iovec* local, size_t localCount, const iovec* remote,
            size_t remoteCount) {
  constexpr size_t kMaxRanges = 1024;  // IOV_MAX on Linux
  iovec mine[kMaxRanges];
  iovec theirs[kMaxRanges];
  RangeCursor here(local, localCount);
  RangeCursor there(remote, remoteCount);
  while (!here.done() && !there.done()) {
    // As many bytes as both sides' next ranges hold.
    size_t localBytes = 0;
    size_t remoteBytes = 0;
    here.next(mine, kMaxRanges, ~size_t{0}, &localBytes);
    const size_t nRemote = there.next(theirs, kMaxRanges, localBytes, &remoteBytes);
    const size_t nLocal = here.next(mine, kMaxRanges, remoteBytes, &localBytes);
    ssize_t moved = write ? process_vm_writev(pid, mine, nLocal, theirs, nRemote, 0)
                          : process_vm_readv(pid, mine, nLocal, theirs, nRemote, 0);
    if (moved < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (moved == 0) return EFAULT;  // a partial transfer stops at an unmapped page
    here.advance(static_cast<size_t>(moved));
    there.advance(static_cast<size_t>(moved));
  }
  return here.done() && there.done() ? 0 : EINVAL;  // the lists must hold the same bytes
}

int openPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

bool processExited(int pidfd) {
  if (pidfd < 0) return false;
  pollfd p{pidfd, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

}  // namespace weft::shm
