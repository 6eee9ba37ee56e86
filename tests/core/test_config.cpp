// config::lookup: the environment wins over the tuning file, which wins over the table's default; get, getOr
// and getInt follow lookup; the table itself is the reference for defaults.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/common/config.h"
#include "core/common/error.h"

namespace weft::config {
namespace {

const Variable& row(const char* name) {
  for (const Variable& v : variables()) {
    if (std::strcmp(v.name, name) == 0) return v;
  }
  throw std::runtime_error(std::string("no table row ") + name);
}

// A fresh start for every test: no tuning-file values, and the variables used here absent from the
// environment (ctest may run with anything set).
class ConfigSources : public ::testing::Test {
 protected:
  void SetUp() override {
    clearTuningFileValues();
    for (const char* name : {kWithDefault, kWithoutDefault}) unsetenv(name);
  }
  void TearDown() override { SetUp(); }

  static constexpr const char* kWithDefault = "WEFT_STREAM_CAPACITY";
  static constexpr const char* kWithoutDefault = "WEFT_ALGO";
};

TEST_F(ConfigSources, DefaultComesFromTheTable) {
  ASSERT_NE(row(kWithDefault).defaultValue, nullptr);
  auto value = lookup(kWithDefault);
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->text, row(kWithDefault).defaultValue);
  EXPECT_EQ(value->source, Source::Default);
  EXPECT_EQ(get(kWithDefault), std::string(row(kWithDefault).defaultValue));
}

TEST_F(ConfigSources, UnsetWithoutDefaultIsAbsent) {
  ASSERT_EQ(row(kWithoutDefault).defaultValue, nullptr);
  EXPECT_FALSE(lookup(kWithoutDefault).has_value());
  EXPECT_FALSE(get(kWithoutDefault).has_value());
  EXPECT_EQ(getOr(kWithoutDefault, "fallback"), "fallback");
  EXPECT_FALSE(lookup("WEFT_NOT_A_SETTING").has_value());
}

TEST_F(ConfigSources, TuningFileReplacesTheDefault) {
  std::string tuned = std::string(row(kWithDefault).defaultValue) + "7";  // differs from the default
  setFromTuningFile(kWithDefault, tuned);
  auto value = lookup(kWithDefault);
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->text, tuned);
  EXPECT_EQ(value->source, Source::TuningFile);
  EXPECT_EQ(getInt(kWithDefault, -1), std::stol(tuned));

  setFromTuningFile(kWithoutDefault, "allreduce:ring");
  EXPECT_EQ(lookup(kWithoutDefault)->source, Source::TuningFile);
  EXPECT_EQ(getOr(kWithoutDefault, ""), "allreduce:ring");
}

TEST_F(ConfigSources, LaterTuningFileValueReplacesEarlier) {
  setFromTuningFile(kWithoutDefault, "allreduce:ring");
  setFromTuningFile(kWithoutDefault, "allreduce:rabenseifner");
  EXPECT_EQ(get(kWithoutDefault), "allreduce:rabenseifner");
}

TEST_F(ConfigSources, EnvironmentWinsOverTuningFile) {
  setFromTuningFile(kWithDefault, "11");
  setenv(kWithDefault, "13", 1);
  auto value = lookup(kWithDefault);
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->text, "13");
  EXPECT_EQ(value->source, Source::Environment);
  EXPECT_EQ(getInt(kWithDefault, -1), 13);
  // Without the environment variable, the tuning file's value is back.
  unsetenv(kWithDefault);
  EXPECT_EQ(lookup(kWithDefault)->text, "11");
  EXPECT_EQ(lookup(kWithDefault)->source, Source::TuningFile);
}

TEST_F(ConfigSources, EmptyEnvironmentValueStillComesFromTheEnvironment) {
  setenv(kWithDefault, "", 1);
  auto value = lookup(kWithDefault);
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->text, "");
  EXPECT_EQ(value->source, Source::Environment);
  EXPECT_EQ(getInt(kWithDefault, 42), 42);  // getInt treats empty as unset, as before
}

TEST_F(ConfigSources, ClearForgetsTuningFileValues) {
  setFromTuningFile(kWithDefault, "9");
  clearTuningFileValues();
  EXPECT_EQ(lookup(kWithDefault)->source, Source::Default);
}

TEST_F(ConfigSources, BadIntegerFromTuningFileNamesTheVariable) {
  setFromTuningFile(kWithDefault, "many");
  try {
    getInt(kWithDefault, 0);
    FAIL() << "no error for a non-integer";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), weftInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(kWithDefault), std::string::npos) << e.what();
  }
}

// Found by tests/fuzz/fuzz_config_int: a JSON string may carry "\u0000", and "5\0x" read as 5.
TEST_F(ConfigSources, IntegerWithEmbeddedNulIsRefused) {
  setFromTuningFile(kWithDefault, std::string("5\0x", 3));
  EXPECT_THROW(getInt(kWithDefault, -1), Error);
  setFromTuningFile(kWithDefault, std::string("5\0", 2));
  EXPECT_THROW(getInt(kWithDefault, -1), Error);
}

TEST(ConfigSourceNames, AreTheDocumentedWords) {
  EXPECT_STREQ(sourceName(Source::Default), "default");
  EXPECT_STREQ(sourceName(Source::Environment), "environment");
  EXPECT_STREQ(sourceName(Source::TuningFile), "tuning file");
}

TEST(ConfigTable, NamesTheTuningFile) {
  EXPECT_EQ(row("WEFT_TUNING_FILE").defaultValue, nullptr);
  EXPECT_NE(std::string(row("WEFT_TUNING_FILE").description).find("commperf --calibrate"), std::string::npos);
}

// Readers never see a torn value while the tuner writes: every value read is one that was written.
TEST_F(ConfigSources, ConcurrentSetAndLookup) {
  constexpr int kRounds = 2000;
  std::vector<std::string> written;
  written.reserve(8);
  for (int i = 0; i < 8; ++i) written.push_back(std::string(100 + i, static_cast<char>('a' + i)));
  std::thread writer([&] {
    for (int i = 0; i < kRounds; ++i) setFromTuningFile(kWithoutDefault, written[i % written.size()]);
  });
  int foreign = 0;
  for (int i = 0; i < kRounds; ++i) {
    if (auto value = lookup(kWithoutDefault)) {
      bool known = std::find(written.begin(), written.end(), value->text) != written.end();
      foreign += known && value->source == Source::TuningFile ? 0 : 1;
    }
  }
  writer.join();
  EXPECT_EQ(foreign, 0);
  EXPECT_EQ(get(kWithoutDefault), written[(kRounds - 1) % written.size()]);
}

}  // namespace
}  // namespace weft::config
