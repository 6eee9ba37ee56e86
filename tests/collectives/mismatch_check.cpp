// WEFT_CHECK=1 (core/collectives/check_calls.h), launched with mpirun: ranks that make different calls get
// weftInvalidUsage on every rank, naming the ranks and what differs, and nothing is written to their
// buffers; matching calls still compute the reference result. Without WEFT_CHECK (--unchecked), a
// mismatched count fails with an error instead, and still writes nothing outside the caller's buffer.
// Each case runs on a fresh communicator: a refused call leaves its communicator in the error state.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace {

int rank = 0, nranks = 1;
int failures = 0;

void expect(bool condition, const std::string& what) {
  if (condition) return;
  std::fprintf(stderr, "[rank %d] FAIL: %s\n", rank, what.c_str());
  ++failures;
}

weftComm_t freshComm() {
  weftUniqueId id{};
  if (rank == 0) weftGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  weftComm_t comm = nullptr;
  if (weftCommInitRank(&comm, nranks, id, rank) != weftSuccess) {
    std::fprintf(stderr, "[rank %d] weftCommInitRank: %s\n", rank, weftGetLastErrorMessage());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return comm;
}

constexpr float kUnwritten = -12345.0f;

// A buffer of `count` floats with `guard` more beyond it, all unwritten.
struct Guarded {
  explicit Guarded(size_t count, size_t guard = 64) : count(count), data(count + guard, kUnwritten) {}
  bool untouchedFrom(size_t first) const {
    for (size_t i = first; i < data.size(); ++i) {
      if (data[i] != kUnwritten) return false;
    }
    return true;
  }
  size_t count;
  std::vector<float> data;
};

// A refused call: the error code, and the message names what it must.
void expectRefused(weftResult_t result, const std::vector<std::string>& needles, const std::string& what) {
  expect(result == weftInvalidUsage, what + ": returned " + weftGetErrorString(result) + ", not invalid usage");
  const std::string message = weftGetLastErrorMessage() ? weftGetLastErrorMessage() : "";
  for (const std::string& needle : needles) {
    expect(message.find(needle) != std::string::npos, what + ": message lacks '" + needle + "': " + message);
  }
}

std::vector<float> inputs(size_t count, int r) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>((r + 1) * 0.25 + static_cast<double>(i % 31));
  return v;
}

void matchingCallsStillWork() {
  weftComm_t comm = freshComm();
  const size_t count = 1000;
  std::vector<float> send = inputs(count, rank);
  Guarded recv(count);
  expect(weftAllReduce(send.data(), recv.data.data(), count, weftFloat32, weftSum, comm, nullptr) == weftSuccess,
         std::string("matching AllReduce failed: ") + weftGetLastErrorMessage());
  for (size_t i = 0; i < count; ++i) {
    double expected = 0;
    for (int r = 0; r < nranks; ++r) expected += inputs(count, r)[i];
    if (recv.data[i] != static_cast<float>(expected)) {
      expect(false, "matching AllReduce: element " + std::to_string(i) + " differs from the reference");
      break;
    }
  }
  expect(recv.untouchedFrom(count), "matching AllReduce wrote past its buffer");
  weftCommDestroy(comm);
}

void differentCount(bool checked) {
  weftComm_t comm = freshComm();
  const size_t count = rank == 1 ? 999 : 1000;
  std::vector<float> send = inputs(count, rank);
  Guarded recv(count);
  const weftResult_t result =
      weftAllReduce(send.data(), recv.data.data(), count, weftFloat32, weftSum, comm, nullptr);
  if (checked) {
    expectRefused(result, {"WEFT_CHECK", "rank 1:", "count 999", "count 1000"}, "a different count");
    expect(recv.untouchedFrom(0), "a refused call wrote to recvbuff");
  } else {
    expect(result != weftSuccess, "a mismatched count succeeded without WEFT_CHECK");
    expect(recv.untouchedFrom(count), "a mismatched count wrote past the caller's buffer");
  }
  weftCommAbort(comm);
}

void differentCollective() {
  weftComm_t comm = freshComm();
  const size_t count = 256;
  std::vector<float> send = inputs(count, rank);
  Guarded recv(count);
  const bool odd = rank == nranks - 1;
  const weftResult_t result =
      odd ? weftBroadcast(send.data(), recv.data.data(), count, weftFloat32, 0, comm, nullptr)
          : weftAllReduce(send.data(), recv.data.data(), count, weftFloat32, weftSum, comm, nullptr);
  expectRefused(result, {"weftBroadcast", "weftAllReduce", "rank " + std::to_string(nranks - 1) + ":"},
                "a different collective");
  expect(recv.untouchedFrom(0), "a refused call wrote to recvbuff");
  weftCommAbort(comm);
}

void differentRoot() {
  weftComm_t comm = freshComm();
  const size_t count = 64;
  Guarded buffer(count);
  const int root = rank == 0 ? 1 : 0;
  const weftResult_t result =
      weftBroadcast(buffer.data.data(), buffer.data.data(), count, weftFloat32, root, comm, nullptr);
  expectRefused(result, {"root 0", "root 1", "rank 0:"}, "a different root");
  expect(buffer.untouchedFrom(0), "a refused Broadcast wrote to its buffer");
  weftCommAbort(comm);
}

// Fused groups are checked as the collective that goes on the wire: rank 0 fuses one call fewer.
void differentGroup() {
  weftComm_t comm = freshComm();
  const size_t count = 128;
  const int calls = rank == 0 ? 2 : 3;
  std::vector<std::vector<float>> buffers(3, inputs(count, rank));
  weftGroupStart();
  for (int c = 0; c < calls; ++c) {
    weftAllReduce(buffers[c].data(), buffers[c].data(), count, weftFloat32, weftSum, comm, nullptr);
  }
  const weftResult_t result = weftGroupEnd();
  expectRefused(result, {"WEFT_CHECK", "fused calls", "rank 0:"}, "a group with one call fewer");
  weftCommAbort(comm);
}

// Send/Recv of different sizes between ranks 0 and 1, after one exchange that matches (so that the second goes
// over made connections, Send/Recv's short path): rank 0 receives fewer bytes than it posted for and is told
// so; rank 1 is sent more than it posted for, fails, and its buffer takes nothing past its count.
void differentSendRecvCount() {
  weftComm_t comm = freshComm();
  if (rank <= 1) {
    const int peer = 1 - rank;
    const size_t count = 1000;
    std::vector<float> send = inputs(count, rank);
    Guarded recv(count);
    auto exchange = [&](size_t sendCount, size_t recvCount) {
      weftGroupStart();
      weftSend(send.data(), sendCount, weftFloat32, peer, comm, nullptr);
      weftRecv(recv.data.data(), recvCount, weftFloat32, peer, comm, nullptr);
      return weftGroupEnd();
    };
    expect(exchange(count, count) == weftSuccess,
           std::string("a matching Send/Recv failed: ") + weftGetLastErrorMessage());
    expect(recv.data[0] == inputs(count, peer)[0] && recv.untouchedFrom(count), "a matching Send/Recv's result");
    Guarded fresh(count);
    std::swap(recv, fresh);
    const size_t recvCount = rank == 0 ? count : count - 1;
    const weftResult_t result = exchange(rank == 0 ? count : count - 1, recvCount);
    if (rank == 0) {
      expectRefused(result, {"rank 1 sent 3996 bytes where rank 0 expected 4000"}, "a short message");
    } else {
      expect(result != weftSuccess, "a message longer than its receive succeeded");
    }
    expect(recv.untouchedFrom(recvCount), "a mismatched Send/Recv wrote past the receive's count");
  }
  // The other ranks abort only now: an abort tells every rank, and would end rank 0's wait with its notice.
  MPI_Barrier(MPI_COMM_WORLD);
  weftCommAbort(comm);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const bool unchecked = argc > 1 && std::strcmp(argv[1], "--unchecked") == 0;
  if (nranks < 2) {
    if (rank == 0) std::printf("SKIP: needs at least 2 ranks\n");
    MPI_Finalize();
    return 77;
  }
  differentSendRecvCount();  // Send/Recv are not checked by WEFT_CHECK: the same either way
  if (unchecked) {
    differentCount(false);
  } else {
    matchingCallsStillWork();
    differentCount(true);
    differentCollective();
    differentRoot();
    differentGroup();
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("mismatch_check%s np=%d: %d failures\n", unchecked ? " --unchecked" : "", nranks, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
