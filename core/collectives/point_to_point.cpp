#include "core/collectives/point_to_point.h"

#include <array>
#include <set>
#include <string>

#include "core/comm/comm.h"
#include "core/comm/connections.h"
#include "core/comm/idle_wait.h"
#include "core/comm/transfer_failure.h"
#include "core/common/log.h"
#include "core/common/rank_list.h"
#include "core/reduce/reduce.h"

namespace weft {
namespace {

// What the general path calls these operations in messages (its point-to-point CommChannel's name).
constexpr std::string_view kOperation = "weftSend/weftRecv";

struct Message {
  const weftTransportOps_v1* transport;
  void* connection;
  void* request;  // the transport's while in flight; null once done
  void* data;
  size_t bytes;
  int peer;
  bool isRecv;
  uint32_t tag;
};

// Tests a message in flight; true once it is done (its request is then null).
bool finished(weftComm& comm, Message& m) {
  int done = 0;
  size_t size = 0;
  const weftResult_t r = m.transport->test(m.request, &done, &size);
  if (r != weftSuccess) {
    m.request = nullptr;
    failTransfer(comm, kOperation, m.isRecv, m.peer, r);
  }
  if (done == 0) return false;
  m.request = nullptr;
  log::trace("{}: {} rank {} done, {} bytes, tag {}", kOperation, m.isRecv ? "recv from" : "send to", m.peer, size,
             m.tag);
  if (m.isRecv && size != m.bytes) failSizeMismatch(comm, kOperation, m.peer, size, m.bytes);
  return true;
}

std::string silentPeers(std::span<const Message> messages) {
  std::set<int> peers;
  for (const Message& m : messages) {
    if (m.request != nullptr) peers.insert(m.peer);
  }
  return silentRankList(peers);
}

}  // namespace

bool runPointToPointDirect(std::span<const Op> ops) {
  if (ops.empty() || ops.size() > kMaxDirectMessages) return false;
  weftComm& comm = *ops.front().comm;
  const Connections& connections = *comm.connections;
  std::array<Message, kMaxDirectMessages> storage;
  const std::span<Message> messages(storage.data(), ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const int peer = op.args.root;
    const bool isRecv = op.kind == OpKind::Recv;
    if (!isPointToPoint(op) || op.comm != &comm || peer == comm.rank) return false;
    void* connection = connections.madeConnection(isRecv, peer, kPointToPointChannel);
    if (connection == nullptr) return false;
    messages[i] = {&connections.ops(peer),
                   connection,
                   nullptr,
                   isRecv ? op.args.recvbuff : const_cast<void*>(op.args.sendbuff),
                   op.args.count * dataTypeSize(op.args.type),
                   peer,
                   isRecv,
                   0};
  }
  // Posted in issue order, numbered per peer and direction as the general path numbers them.
  for (Message& m : messages) {
    m.tag = m.isRecv ? comm.receivedFrom[m.peer]++ : comm.sentTo[m.peer]++;
    const weftResult_t r = m.isRecv
                               ? m.transport->irecv(m.connection, m.data, m.bytes, m.tag, nullptr, &m.request)
                               : m.transport->isend(m.connection, m.data, m.bytes, m.tag, nullptr, &m.request);
    if (r != weftSuccess) failToStart(comm, kOperation, m.isRecv, m.peer, r);
  }
  IdleWait wait(comm, kOperation);
  size_t left = messages.size();
  while (left > 0) {
    wait.throwIfAborted();
    const Message* stalled = nullptr;
    bool moved = false;
    for (Message& m : messages) {
      if (m.request == nullptr) continue;
      if (finished(comm, m)) {
        --left;
        moved = true;
      } else {
        stalled = &m;
      }
    }
    if (moved) {
      wait.moved();
    } else {
      wait.idle(stalled->peer, true, [&] { return silentPeers(messages); });
    }
  }
  return true;
}

}  // namespace weft
