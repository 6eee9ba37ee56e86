// The mpi plugin's transport through its C ABI alone (dlopen), two ranks under mpirun: a message with
// another tag, or longer than the posted receive, fails the receive with weftRemoteError and leaves the
// buffer untouched; a shorter one completes with its size; a large message arrives intact. MPI only
// carries the listen handle from one rank to the other here.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <dlfcn.h>
#include <mpi.h>
#include <weft/plugin.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int gRank = 0;
int gFailures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    ++gFailures;
    std::fprintf(stderr, "[rank %d] FAIL %s\n", gRank, what.c_str());
  }
}

void hostLog(weftLogLevel_t, const char*, const char* message) { std::fprintf(stderr, "[plugin] %s\n", message); }
const char* hostConfig(const char*) { return nullptr; }
const weftPluginHost_v1 kHost = {WEFT_PLUGIN_ABI_VERSION, hostLog, hostConfig};

// Polls a request to its end: the result of the last test, and the size reported.
weftResult_t finish(const weftTransportOps_v1* t, void* request, size_t* size) {
  for (;;) {
    int done = 0;
    weftResult_t r = t->test(request, &done, size);
    if (r != weftSuccess || done != 0) return r;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (gRank == 0) std::printf("SKIP: test_mpi_transport needs exactly 2 ranks\n");
    MPI_Finalize();
    return 77;
  }
  void* library = dlopen(WEFT_MPI_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const auto* plugin = static_cast<const weftPlugin_v1_t*>(dlsym(library, WEFT_PLUGIN_SYMBOL_V1));
  void* ctx = nullptr;
  check(plugin != nullptr && plugin->init(&kHost, &ctx) == weftSuccess, "init");
  const weftTransportOps_v1* t = plugin->transport;
  const uint64_t token = 0x1234abcd;
  const size_t kBig = (size_t{3} << 20) + 17;
  // Four messages, in order on one connection: tag 5 (received as tag 6), 200 bytes (into 100), 50
  // bytes (into 100), kBig bytes. A bad message breaks the connection, so each case has its own.
  const int kCases = 4;
  if (gRank == 1) {  // receiver
    std::vector<void*> listeners(kCases);
    std::vector<unsigned char> handles(static_cast<size_t>(kCases) * WEFT_NET_HANDLE_BYTES);
    for (int c = 0; c < kCases; ++c) {
      check(t->listen(ctx, token, &handles[static_cast<size_t>(c) * WEFT_NET_HANDLE_BYTES], &listeners[c]) ==
                weftSuccess,
            "listen");
    }
    MPI_Send(handles.data(), static_cast<int>(handles.size()), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    for (int c = 0; c < kCases; ++c) {
      void* conn = nullptr;
      uint64_t connector = 0;
      while (conn == nullptr) check(t->accept(listeners[c], &conn, &connector) == weftSuccess, "accept");
      check(connector == 100U + static_cast<uint64_t>(c), "accept: connector id");
      std::vector<unsigned char> buffer(c == 3 ? kBig : 100, 0xEE);
      void* request = nullptr;
      const uint32_t tag = c == 0 ? 6 : 5;
      check(t->irecv(conn, buffer.data(), buffer.size(), tag, nullptr, &request) == weftSuccess, "irecv");
      size_t got = 0;
      weftResult_t r = finish(t, request, &got);
      bool untouched = true;
      for (unsigned char b : buffer) untouched &= b == 0xEE;
      if (c == 0) check(r == weftRemoteError && untouched, "another tag fails the receive, buffer untouched");
      if (c == 1) check(r == weftRemoteError && untouched, "a longer message fails the receive, buffer untouched");
      if (c == 2) {
        bool ok = r == weftSuccess && got == 50;
        for (size_t i = 0; i < 100; ++i) ok &= buffer[i] == (i < 50 ? static_cast<unsigned char>(i) : 0xEE);
        check(ok, "a shorter message completes with its size and writes only its bytes");
      }
      if (c == 3) {
        bool ok = r == weftSuccess && got == kBig;
        for (size_t i = 0; i < kBig; ++i) ok &= buffer[i] == static_cast<unsigned char>(i * 7);
        check(ok, "a large message arrives intact");
      }
      t->closeRecv(conn);
      t->closeListen(listeners[c]);
      MPI_Barrier(MPI_COMM_WORLD);  // case checked: the sender may close and go on
    }
  } else {  // sender
    std::vector<unsigned char> handles(static_cast<size_t>(kCases) * WEFT_NET_HANDLE_BYTES);
    MPI_Recv(handles.data(), static_cast<int>(handles.size()), MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int c = 0; c < kCases; ++c) {
      void* conn = nullptr;
      while (conn == nullptr) {
        check(t->connect(ctx, &handles[static_cast<size_t>(c) * WEFT_NET_HANDLE_BYTES], token, 100 + c, &conn) ==
                  weftSuccess,
              "connect");
      }
      const size_t bytes = c == 1 ? 200 : c == 2 ? 50 : c == 3 ? kBig : 100;
      std::vector<unsigned char> data(bytes);
      for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(c == 3 ? i * 7 : i);
      void* request = nullptr;
      check(t->isend(conn, data.data(), bytes, 5, nullptr, &request) == weftSuccess, "isend");
      size_t sent = 0;
      check(finish(t, request, &sent) == weftSuccess && sent == bytes, "isend completes");
      MPI_Barrier(MPI_COMM_WORLD);  // the receiver has checked this case
      t->closeSend(conn);
    }
  }
  plugin->finalize(ctx);
  int failures = gFailures;
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (gRank == 0)
    std::printf("test_mpi_transport: %s (%d failures)\n", failures == 0 ? "PASSED" : "FAILED", failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
