// Cross-memory attach: the receiver copies a large message straight from the sender's address space into
// the user's buffer with process_vm_readv (one copy instead of two through the ring).
//
// The kernel allows it only where ptrace would be allowed (same user, Yama ptrace_scope, no seccomp filter
// in the way, not across user namespaces), so it is tried on ourselves at init and on the peer at connection
// setup; where it fails the connection copies through the ring instead.
#ifndef WEFT_PLUGINS_SHM_CMA_H
#define WEFT_PLUGINS_SHM_CMA_H

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace weft::shm {

// 0 when process_vm_readv works on this process, else the errno.
int cmaSelfTest();

// Lets the peers read this process where Yama's ptrace_scope is 1 (Ubuntu's default), which otherwise
// allows it only to an ancestor or a declared tracer, and ranks are siblings: declares any process a
// permitted tracer (PR_SET_PTRACER_ANY). The kernel's other checks (same user, dumpable, no seccomp filter)
// still apply; scopes 2 and 3 stay closed. Nothing to do (EINVAL, ignored) where Yama is not in the kernel.
void allowPeersToRead();

// 0 when the 8 bytes at `address` in process pid read back as `expected`; else the errno (EIO when the
// value differs: the pid is not the process that sent the hello).
int cmaProbe(pid_t pid, uint64_t address, uint64_t expected);

// Reads n bytes at `address` in pid into dst. 0 or the errno.
int cmaRead(pid_t pid, void* dst, uint64_t address, size_t n);

// Writes n bytes from src at `address` in pid. 0 or the errno.
int cmaWrite(pid_t pid, uint64_t address, const void* src, size_t n);

// Moves bytes between ranges of this process (`local`) and ranges of pid (`remote`), which must hold the
// same number of bytes: process_vm_readv (remote to local), or process_vm_writev when `write`; at most
// IOV_MAX ranges a side per call, resuming after partial transfers. 0 or the errno.
int cmaList(pid_t pid, bool write, const iovec* local, size_t localCount, const iovec* remote, size_t remoteCount);

// A pidfd for pid (-1 where the kernel has none): unlike the pid it cannot come to name another process.
int openPidfd(pid_t pid);

// Whether the process behind pidfd has exited (false for pidfd -1).
bool processExited(int pidfd);

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_CMA_H
