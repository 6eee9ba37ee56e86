#include "shm_cma.h"

#include <poll.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weft::shm {

int cmaSelfTest() {
  constexpr uint64_t kCookie = 0x5ca1ab1e0ddba11ULL;
  volatile uint64_t source = kCookie;  // volatile: it must really be in memory to be read from outside
  return cmaProbe(getpid(), reinterpret_cast<uint64_t>(&source), kCookie);
}

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
    iovec remote{reinterpret_cast<void*>(address + done), n - done};
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
    iovec remote{reinterpret_cast<void*>(address + done), n - done};
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
