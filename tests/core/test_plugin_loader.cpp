// The loader reports each way a plugin can fail, and loads a real one.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "core/common/error.h"
#include "core/common/log.h"
#include "core/plugins/loader.h"
#include "core/plugins/registry.h"

namespace weft {
namespace {

LoadAttempt tryLoad(const std::string& name, const std::string& dir) {
  LoadedPlugin plugin;
  return loadPlugin(name, {dir}, plugin);
}

// While one lives, what Weft's logger writes at warn level or above is also kept here (with WEFT_LOG_LEVEL
// set higher, the logger is lowered to warn meanwhile). Single-threaded use only: it edits the logger's sinks.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_st>(text_)), level_(log::get().level()) {
    sink_->set_level(spdlog::level::warn);
    log::get().sinks().push_back(sink_);
    if (level_ > spdlog::level::warn) log::get().set_level(spdlog::level::warn);
  }
  ~LogCapture() {
    auto& sinks = log::get().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
    log::get().set_level(level_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_st> sink_;
  spdlog::level::level_enum level_;
};

TEST(PluginLoader, MissingFileSaysNotFoundAndWhere) {
  LoadAttempt a = tryLoad("absent", WEFT_FIXTURE_PLUGIN_DIR);
  EXPECT_FALSE(a.loaded);
  EXPECT_NE(a.reason.find("not found"), std::string::npos) << a.reason;
  EXPECT_NE(a.reason.find("libweft-plugin-absent.so"), std::string::npos) << a.reason;
  EXPECT_NE(a.reason.find(WEFT_FIXTURE_PLUGIN_DIR), std::string::npos) << a.reason;
}

TEST(PluginLoader, MissingSymbol) {
  LoadAttempt a = tryLoad("nosymbol", WEFT_FIXTURE_PLUGIN_DIR);
  EXPECT_FALSE(a.loaded);
  EXPECT_NE(a.reason.find("missing symbol weftPlugin_v1"), std::string::npos) << a.reason;
  EXPECT_NE(a.path.find("libweft-plugin-nosymbol.so"), std::string::npos) << a.path;
}

TEST(PluginLoader, WrongAbiVersion) {
  LoadAttempt a = tryLoad("badversion", WEFT_FIXTURE_PLUGIN_DIR);
  EXPECT_FALSE(a.loaded);
  EXPECT_NE(a.reason.find("wrong ABI version 99"), std::string::npos) << a.reason;
}

TEST(PluginLoader, InitFailure) {
  LoadAttempt a = tryLoad("initfails", WEFT_FIXTURE_PLUGIN_DIR);
  EXPECT_FALSE(a.loaded);
  EXPECT_NE(a.reason.find("init failed"), std::string::npos) << a.reason;
}

TEST(PluginLoader, SearchesFoldersInOrder) {
  LoadedPlugin plugin;
  LoadAttempt a = loadPlugin("tcp", {WEFT_FIXTURE_PLUGIN_DIR, WEFT_PLUGIN_BUILD_DIR}, plugin);
  ASSERT_TRUE(a.loaded) << a.reason;
  EXPECT_EQ(plugin.plugin->kind, weftPluginTransport);
  EXPECT_STREQ(plugin.plugin->name, "tcp");
  EXPECT_NE(plugin.plugin->transport, nullptr);
  EXPECT_EQ(a.path, std::string(WEFT_PLUGIN_BUILD_DIR) + "/libweft-plugin-tcp.so");
  // The loader hands over a live plugin; its owner finalizes it (else LeakSanitizer reports the context).
  EXPECT_EQ(plugin.plugin->finalize(plugin.context), weftSuccess);
}

// A transport's weftTransportVec_v1 of an unknown ABI version, or without one of its calls, is ignored with a
// warning that says so; the plugin itself loads.
void expectTransportVecIgnored(const char* name, const char* version) {
  LogCapture log;
  LoadedPlugin plugin;
  LoadAttempt a = loadPlugin(name, {WEFT_FIXTURE_PLUGIN_DIR}, plugin);
  ASSERT_TRUE(a.loaded) << a.reason;
  EXPECT_NE(plugin.plugin->transport, nullptr);
  EXPECT_EQ(plugin.transportVec, nullptr);
  const std::string warning = std::string("plugin ") + name + ": ignoring weftTransportVec_v1 (ABI version " +
                              version + " or calls missing";
  EXPECT_NE(log.text().find(warning), std::string::npos) << log.text();
  EXPECT_EQ(plugin.plugin->finalize(plugin.context), weftSuccess);
}

TEST(PluginLoader, IgnoresTransportVecOfUnknownVersion) { expectTransportVecIgnored("badvecversion", "2"); }

TEST(PluginLoader, IgnoresTransportVecWithMissingCall) { expectTransportVecIgnored("badveccalls", "1"); }

// tcp offers vectored messages.
TEST(PluginLoader, KeepsTcpTransportVecAndPair) {
  LogCapture log;
  LoadedPlugin plugin;
  LoadAttempt a = loadPlugin("tcp", {WEFT_PLUGIN_BUILD_DIR}, plugin);
  ASSERT_TRUE(a.loaded) << a.reason;
  ASSERT_NE(plugin.transportVec, nullptr);
  EXPECT_EQ(plugin.transportVec->abiVersion, 1U);
  EXPECT_NE(plugin.transportVec->isendv, nullptr);
  EXPECT_NE(plugin.transportVec->irecvv, nullptr);
  ASSERT_NE(plugin.transportPair, nullptr);  // one socket both ways
  EXPECT_EQ(plugin.transportPair->abiVersion, 1U);
  EXPECT_NE(plugin.transportPair->connectPaired, nullptr);
  EXPECT_EQ(log.text().find("ignoring"), std::string::npos) << log.text();
  EXPECT_EQ(plugin.plugin->finalize(plugin.context), weftSuccess);
}

// shm offers vectored messages too, and the backend's list extension.
TEST(PluginLoader, KeepsShmTransportVecAndBackendListAndAdvice) {
  LogCapture log;
  LoadedPlugin plugin;
  LoadAttempt a = loadPlugin("shm", {WEFT_PLUGIN_BUILD_DIR}, plugin);
  ASSERT_TRUE(a.loaded) << a.reason;
  ASSERT_NE(plugin.transportVec, nullptr);
  EXPECT_EQ(plugin.transportVec->abiVersion, 1U);
  EXPECT_EQ(plugin.transportPair, nullptr);  // its connections are one-way rings
  EXPECT_NE(plugin.plugin->backend, nullptr);
  EXPECT_NE(plugin.backendList, nullptr);
  ASSERT_NE(plugin.backendAdvice, nullptr);
  EXPECT_EQ(plugin.backendAdvice->prefersPluginMemory(nullptr, nullptr), 1);  // no communicator: the default
  EXPECT_EQ(log.text().find("ignoring"), std::string::npos) << log.text();
  EXPECT_EQ(plugin.plugin->finalize(plugin.context), weftSuccess);
}

TEST(PluginSelection, Parses) {
  PluginSelection s = parsePluginSelection("tcp,shm");
  EXPECT_EQ(s.requested, (std::vector<std::string>{"tcp", "shm"}));
  EXPECT_TRUE(s.excluded.empty());
  s = parsePluginSelection("^mpi");
  EXPECT_EQ(s.excluded, (std::vector<std::string>{"mpi"}));
  EXPECT_TRUE(parsePluginSelection("").requested.empty());
}

TEST(PluginSelection, RejectsMalformed) {
  EXPECT_THROW(parsePluginSelection("tcp,,shm"), Error);
  EXPECT_THROW(parsePluginSelection("^"), Error);
  EXPECT_THROW(parsePluginSelection("../evil"), Error);
  EXPECT_THROW(parsePluginSelection("tcp,^shm"), Error);
}

}  // namespace
}  // namespace weft
