// The plugin's entry table: init/finalize/properties, and the transport calls through the shared C ABI
// boundary (plugins/common/transport_boundary.h: argument checks, no exception escapes).
#include <netinet/in.h>
#include <sys/socket.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "common/parse_bytes.h"
#include "common/transport_boundary.h"
#include "tcp_conn.h"
#include "tcp_context.h"
#include "tcp_iface.h"
#include "tcp_log.h"
#include "tcp_setup.h"
#include "tcp_socket.h"
#include "weft/plugin.h"

namespace weft::tcp {
namespace {

// The parts of this plugin that the shared C ABI boundary (plugins/common/transport_boundary.h) calls.
struct Parts {
  using Context = weft::tcp::Context;
  using ListenComm = weft::tcp::ListenComm;
  using Connection = weft::tcp::Connection;
  using Request = weft::tcp::Request;
  using RequestState = weft::tcp::RequestState;
  static constexpr plugins::LogFn logf = weft::tcp::logf;
  static constexpr auto listenOn = weft::tcp::listenOn;
  static constexpr auto connectTo = weft::tcp::connectTo;
  static constexpr auto connectPairedTo = weft::tcp::connectPairedTo;
  static constexpr auto acceptOne = weft::tcp::acceptOne;
};
using Boundary = plugins::TransportBoundary<Parts>;

weftResult_t tcpInit(const weftPluginHost_v1* host, void** ctx) {
  if (host == nullptr || ctx == nullptr) return weftInvalidArgument;
  *ctx = nullptr;
  return Boundary::guarded(host, "init", [&]() -> weftResult_t {
    if (host->abiVersion < 1) {
      logf(host, weftLogError, "init: host ABI version %u is not supported", host->abiVersion);
      return weftPluginError;
    }
    auto config = [&](const char* name) -> const char* {
      return host->getConfig != nullptr ? host->getConfig(name) : nullptr;
    };
    int family = AF_UNSPEC;
    if (const char* f = config("WEFT_SOCKET_FAMILY"); f != nullptr && *f != '\0') {
      if (std::strcmp(f, "AF_INET") == 0 || std::strcmp(f, "4") == 0 || std::strcmp(f, "ipv4") == 0) {
        family = AF_INET;
      } else if (std::strcmp(f, "AF_INET6") == 0 || std::strcmp(f, "6") == 0 || std::strcmp(f, "ipv6") == 0) {
        family = AF_INET6;
      } else {
        logf(host, weftLogError, "init: WEFT_SOCKET_FAMILY=%s is not AF_INET or AF_INET6", f);
        return weftInvalidArgument;
      }
    }
    unsigned long long parsed = kDefaultSocketBuffer;
    if (const char* b = config("WEFT_SOCKET_BUFFER");
        b != nullptr && *b != '\0' && (!plugins::parseBytes(b, &parsed) || parsed > LLONG_MAX)) {
      logf(host, weftLogError, "init: WEFT_SOCKET_BUFFER=%s is not a byte count (e.g. 4194304 or 4M)", b);
      return weftInvalidArgument;
    }
    const auto bufferBytes = static_cast<long long>(parsed);
    int deadPeerSeconds = kDefaultDeadPeerSeconds;
    if (const char* d = config("WEFT_SOCKET_DEAD_PEER"); d != nullptr && *d != '\0') {
      char* end = nullptr;
      long seconds = std::strtol(d, &end, 10);
      if (*end != '\0' || seconds < 0 || seconds > 86400) {
        logf(host, weftLogError, "init: WEFT_SOCKET_DEAD_PEER=%s is not a number of seconds from 0 to 86400", d);
        return weftInvalidArgument;
      }
      deadPeerSeconds = static_cast<int>(seconds);
    }
    bool pairSockets = true;
    if (const char* pair = config("WEFT_SOCKET_PAIR"); pair != nullptr && *pair != '\0') {
      if (std::strcmp(pair, "0") != 0 && std::strcmp(pair, "1") != 0) {
        logf(host, weftLogError, "init: WEFT_SOCKET_PAIR=%s is not 0 or 1", pair);
        return weftInvalidArgument;
      }
      pairSockets = *pair == '1';
    }
    CongestionSetting congestion;
    if (const char* cc = config("WEFT_SOCKET_CONGESTION"); !parseCongestion(cc, &congestion)) {
      logf(host, weftLogError,
           "init: WEFT_SOCKET_CONGESTION=%s is not auto, host or a congestion control's name (cubic, reno, bbr)",
           cc);
      return weftInvalidArgument;
    }
    const char* ifname = config("WEFT_SOCKET_IFNAME");
    Interface iface;
    std::string error;
    if (!selectInterface(ifname, family, &iface, &error)) {
      logf(host, weftLogError, "init: %s", error.c_str());
      return weftSystemError;
    }
    logf(host, weftLogInfo, "using interface %s, address %s (%s), socket buffers %lld bytes%s%s",
         iface.name.c_str(), formatAddress(iface.addr, false).c_str(),
         iface.addr.ss_family == AF_INET ? "IPv4" : "IPv6", bufferBytes,
         ifname != nullptr && *ifname != '\0' ? ", from WEFT_SOCKET_IFNAME=" : "",
         ifname != nullptr && *ifname != '\0' ? ifname : "");
    auto* context = new Context(host, std::move(iface), bufferBytes, deadPeerSeconds);
    context->pairSockets = pairSockets;
    context->congestion = congestion;
    context->hostCongestion = hostCongestion();
    *ctx = context;
    return weftSuccess;
  });
}

weftResult_t tcpFinalize(void* ctx) {
  if (ctx == nullptr) return weftSuccess;
  return Boundary::guarded(Boundary::hostOf(ctx), "finalize", [&]() -> weftResult_t {
    auto* c = static_cast<Context*>(ctx);
    {
      std::lock_guard<std::mutex> lock(c->connectMutex);
      c->connects.clear();
    }
    if (size_t open = c->openSockets(); open > 0) {
      // Comms still point at the context: keep it rather than leave them dangling.
      logf(c->host(), weftLogWarn, "finalize: %zu sockets still open; close every comm first", open);
      return weftSuccess;
    }
    delete c;
    return weftSuccess;
  });
}

weftResult_t tcpGetProperties(void* ctx, weftTransportProps_v1* props) {
  if (ctx == nullptr || props == nullptr) return weftInvalidArgument;
  return Boundary::guarded(Boundary::hostOf(ctx), "getProperties", [&] {
    const Interface& iface = static_cast<Context*>(ctx)->iface();
    double speed = linkSpeedGBps(iface.name);
    props->name = kPluginName;
    props->reach = weftReachAny;
    props->latencyUs = iface.loopback ? 10.0 : 30.0;
    props->bandwidthGBps = speed > 0 ? speed : (iface.loopback ? 5.0 : 1.25);
    props->maxConnsPerPeer = 0;
    return weftSuccess;
  });
}

}  // namespace
}  // namespace weft::tcp

// The exported symbols; the loader looks them up by name.
extern "C" {
extern WEFT_API const weftPlugin_v1_t weftPlugin_v1;
extern WEFT_API const weftTransportVecOps_v1 weftTransportVec_v1;
extern WEFT_API const weftTransportPairOps_v1 weftTransportPair_v1;
}

const weftPlugin_v1_t weftPlugin_v1 = {
    .abiVersion = WEFT_PLUGIN_ABI_VERSION,
    .name = weft::tcp::kPluginName,
    .kind = weftPluginTransport,
    .init = weft::tcp::tcpInit,
    .finalize = weft::tcp::tcpFinalize,
    .getProperties = weft::tcp::tcpGetProperties,
    .transport = &weft::tcp::Boundary::kOps,
    .backend = nullptr,
};

const weftTransportVecOps_v1 weftTransportVec_v1 = weft::tcp::Boundary::vecOps();

const weftTransportPairOps_v1 weftTransportPair_v1 = weft::tcp::Boundary::pairOps();
