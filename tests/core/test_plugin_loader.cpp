// The loader reports each way a plugin can fail, and loads a real one.
#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/plugins/loader.h"
#include "core/plugins/registry.h"

namespace weft {
namespace {

LoadAttempt tryLoad(const std::string& name, const std::string& dir) {
  LoadedPlugin plugin;
  return loadPlugin(name, {dir}, plugin);
}

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
