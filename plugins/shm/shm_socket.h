// Unix domain sockets in the abstract namespace: the handshake (hello and reply, with fds passed by
// SCM_RIGHTS) and, for the connection's whole life, the sign that the peer is gone (EOF or POLLHUP: the
// kernel closes a killed process's sockets, which it never does for a shared segment).
#ifndef WEFT_PLUGINS_SHM_SOCKET_H
#define WEFT_PLUGINS_SHM_SOCKET_H

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace weft::shm {

// A fresh abstract socket name ("weft-shm-" + 128 random bits in hex). Returns false with *error set.
bool randomSocketName(std::string* name, std::string* error);

// A non-blocking, close-on-exec SOCK_SEQPACKET socket listening on the abstract name. -1 with *error set.
int listenAbstract(const std::string& name, std::string* error);

// A non-blocking SOCK_SEQPACKET socket connected to the abstract name, or -1 with errno set (EAGAIN: the
// listener's backlog is full, try again).
int connectAbstract(const std::string& name);

// Sends one datagram with nfds fds attached. Returns the bytes sent or -1 with errno set.
ssize_t sendWithFds(int fd, const void* data, size_t bytes, const int* fds, int nfds);

// Receives one datagram (non-blocking) and up to maxFds fds (close-on-exec). *nfds is how many arrived;
// the caller owns and closes them, also on every error. *truncated is set when data or fds were cut off.
// Returns the bytes received, 0 at end of stream, or -1 with errno set.
ssize_t recvWithFds(int fd, void* data, size_t bytes, int* fds, int maxFds, int* nfds, bool* truncated);

// The pid of the process at the other end, as the kernel recorded it at connect/listen time (translated
// into our pid namespace, unlike a pid the peer tells us). -1 when unknown.
pid_t peerPid(int fd);

enum class SocketState { Quiet, Readable, Gone };

// Without blocking: Gone on hang-up or error, Readable when a datagram (or EOF) waits, else Quiet.
SocketState socketState(int fd);

// Closes fd unless it is -1, keeping errno.
void closeFd(int fd);
void closeFds(const int* fds, int nfds);

}  // namespace weft::shm

#endif  // WEFT_PLUGINS_SHM_SOCKET_H
