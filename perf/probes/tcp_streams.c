/* tcp_streams: would several TCP connections per pair of ranks move large messages faster than one?
 *
 * Two processes (a fork) exchange SIZE bytes both ways at once over loopback, ITERS times, the way a
 * 2-rank ring step or Send/Recv does, and rank 0 prints the median and fastest exchange:
 *   shared   one socket carries both directions (what the tcp plugin does by default, WEFT_SOCKET_PAIR=1)
 *   split K  K sockets per direction, the message cut into K equal stripes, one per socket
 * Both ranks send at most 512 KiB per sendmsg before they look at their receives, as the plugin does.
 * Non-blocking sockets, busy polling, TCP_NODELAY, 4 MiB socket buffers (the plugin's WEFT_SOCKET_BUFFER).
 *
 * usage: tcp_streams shared|split K SIZE ITERS      e.g. tcp_streams split 4 4194304 100
 * TCP_STREAMS_SMALL_FIRST=N in the environment: N 8-byte exchanges on the first socket before the timed ones.
 * Results and the decision they led to: perf/README.md, "Several TCP connections per pair of ranks". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMaxStreams = 16 };
static const size_t kMostBytesPerSend = (size_t)512 << 10;

struct Setup {
  int shared;
  int streams;
  size_t size;
  int iters;
};

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int fail(const char* what) {
  fprintf(stderr, "tcp_streams: %s: %s\n", what, strerror(errno));
  return 1;
}

static int configure(int fd) {
  int one = 1;
  int bytes = 4 << 20;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes) != 0 || fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
    return fail("configuring a socket");
  }
  return 0;
}

static unsigned char pattern(size_t i, int rank) {
  return (unsigned char)((i / 4093) * 31 + i + 101 * (size_t)rank);
}

static int compareDoubles(const void* a, const void* b) {
  double x = *(const double*)a;
  double y = *(const double*)b;
  return (x > y) - (x < y);
}

/* One exchange: every stripe sent on sendFds[k] and received on recvFds[k]. Returns 0, or 1 on an error. */
static int exchange(const struct Setup* s, const int* sendFds, const int* recvFds, const char* out, char* in) {
  size_t stripe = s->size / (size_t)s->streams;
  size_t sent[kMaxStreams] = {0};
  size_t got[kMaxStreams] = {0};
  int unfinished = 2 * s->streams;
  while (unfinished > 0) {
    for (int k = 0; k < s->streams; ++k) {
      size_t begin = stripe * (size_t)k;
      size_t length = k == s->streams - 1 ? s->size - begin : stripe;
      if (sent[k] < length) {
        size_t n = length - sent[k] < kMostBytesPerSend ? length - sent[k] : kMostBytesPerSend;
        ssize_t w = send(sendFds[k], out + begin + sent[k], n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EINTR) return fail("send");
        if (w > 0 && (sent[k] += (size_t)w) == length) --unfinished;
      }
      if (got[k] < length) {
        ssize_t r = recv(recvFds[k], in + begin + got[k], length - got[k], MSG_DONTWAIT);
        if (r == 0) errno = ECONNRESET;
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) return fail("recv");
        if (r > 0 && (got[k] += (size_t)r) == length) --unfinished;
      }
    }
  }
  return 0;
}

static int parse(int argc, char** argv, struct Setup* s) {
  if (argc != 5) return 1;
  s->shared = strcmp(argv[1], "shared") == 0;
  s->streams = atoi(argv[2]);
  s->size = strtoull(argv[3], NULL, 0);
  s->iters = atoi(argv[4]);
  int modeKnown = s->shared || strcmp(argv[1], "split") == 0;
  return !modeKnown || s->streams < 1 || s->streams > kMaxStreams || s->size < (size_t)s->streams || s->iters < 1;
}

int main(int argc, char** argv) {
  struct Setup s;
  if (parse(argc, argv, &s) != 0) {
    fprintf(stderr, "usage: tcp_streams shared|split K(1-%d) SIZE ITERS\n", kMaxStreams);
    return 2;
  }
  /* Every socket is connected before the fork; each process then uses its own end of each. */
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t addrLen = sizeof addr;
  if (listener < 0 || bind(listener, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(listener, 64) != 0 ||
      getsockname(listener, (struct sockaddr*)&addr, &addrLen) != 0) {
    return fail("listening on loopback");
  }
  int connections = s.shared ? s.streams : 2 * s.streams;
  int connected[2 * kMaxStreams];
  int accepted[2 * kMaxStreams];
  for (int i = 0; i < connections; ++i) {
    connected[i] = socket(AF_INET, SOCK_STREAM, 0);
    if (connected[i] < 0 || connect(connected[i], (struct sockaddr*)&addr, sizeof addr) != 0)
      return fail("connect");
    accepted[i] = accept(listener, NULL, NULL);
    if (accepted[i] < 0) return fail("accept");
  }
  char* out = malloc(s.size);
  char* in = malloc(s.size);
  double* times = malloc(sizeof(double) * (size_t)s.iters);
  if (out == NULL || in == NULL || times == NULL) return fail("malloc");
  memset(in, 0, s.size); /* first touch outside the timing */
  pid_t child = fork();
  if (child < 0) return fail("fork");
  int rank = child == 0;
  /* Each rank sends its own pattern, so that a stripe landing in the wrong place is seen. */
  for (size_t i = 0; i < s.size; ++i) out[i] = (char)pattern(i, rank);
  int sendFds[kMaxStreams];
  int recvFds[kMaxStreams];
  for (int k = 0; k < s.streams; ++k) {
    if (s.shared) {
      sendFds[k] = recvFds[k] = rank ? connected[k] : accepted[k];
    } else { /* connections 0..K-1 carry rank 1 -> 0, K..2K-1 rank 0 -> 1 */
      sendFds[k] = rank ? connected[k] : accepted[s.streams + k];
      recvFds[k] = rank ? connected[s.streams + k] : accepted[k];
    }
    if (configure(sendFds[k]) != 0 || (!s.shared && configure(recvFds[k]) != 0)) return 1;
  }
  /* TCP_STREAMS_SMALL_FIRST=N: N exchanges of 8 bytes on the same sockets before the timed ones, as a job's
   * small collectives come before its large ones (does the congestion control learn from them?). */
  const char* smallFirst = getenv("TCP_STREAMS_SMALL_FIRST");
  struct Setup small = s;
  small.size = 8;
  small.streams = 1;
  for (long i = 0, n = smallFirst != NULL ? atol(smallFirst) : 0; i < n; ++i) {
    if (exchange(&small, sendFds, recvFds, out, in) != 0) return 1;
  }
  for (int i = 0; i < s.iters; ++i) {
    double start = seconds();
    if (exchange(&s, sendFds, recvFds, out, in) != 0) return 1;
    times[i] = seconds() - start;
  }
  for (size_t i = 0; i < s.size; ++i) {
    if ((unsigned char)in[i] != pattern(i, 1 - rank)) {
      fprintf(stderr, "tcp_streams: rank %d: byte %zu is not what the peer sent\n", rank, i);
      return 1;
    }
  }
  qsort(times, (size_t)s.iters, sizeof(double), compareDoubles);
  if (rank == 0) {
    double median = times[s.iters / 2];
    printf("%s K=%d size=%zu median_us %.1f min_us %.1f GBps_each_way %.2f\n", s.shared ? "shared" : "split",
           s.streams, s.size, median * 1e6, times[0] * 1e6, (double)s.size / median / 1e9);
  }
  free(times);
  free(in);
  free(out);
  if (child > 0) {
    int status = 0;
    if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return 0;
}
