#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "core/settings.h"

namespace {

class Settings : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.file("config.json");
    unsetenv("KVSEARCH_MODEL");
    unsetenv("KVSEARCH_CONFIG");
  }
  void TearDown() override {
    unsetenv("KVSEARCH_MODEL");
    unsetenv("KVSEARCH_CONFIG");
  }
  kvs::test::ScratchDir dir_;  // one per test case: ctest runs them in parallel processes
  std::string config_;
};

TEST_F(Settings, FlagBeatsEnvironmentBeatsConfigFile) {
  std::ofstream(config_) << R"({"model": "/from/config"})";
  setenv("KVSEARCH_CONFIG", config_.c_str(), 1);
  EXPECT_EQ(kvs::resolve_setting(kvs::kModelSetting, ""), "/from/config");
  setenv("KVSEARCH_MODEL", "/from/env", 1);
  EXPECT_EQ(kvs::resolve_setting(kvs::kModelSetting, ""), "/from/env");
  EXPECT_EQ(kvs::resolve_setting(kvs::kModelSetting, "/from/flag"), "/from/flag");
}

TEST_F(Settings, MissingValueExplainsEveryWayToSetIt) {
  setenv("KVSEARCH_CONFIG", config_.c_str(), 1);
  std::ofstream(config_) << R"({"longbench": "/lb"})";
  try {
    kvs::resolve_setting(kvs::kModelSetting, "");
    FAIL() << "expected an error";
  } catch (const kvs::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("--model"), std::string::npos);
    EXPECT_NE(msg.find("KVSEARCH_MODEL"), std::string::npos);
    EXPECT_NE(msg.find(config_), std::string::npos);
  }
  EXPECT_EQ(kvs::resolve_setting(kvs::kModelSetting, "", "fallback"), "fallback");
}

TEST_F(Settings, MalformedConfigFileIsAnError) {
  std::ofstream(config_) << R"({"model": 3})";
  setenv("KVSEARCH_CONFIG", config_.c_str(), 1);
  EXPECT_THROW(kvs::resolve_setting(kvs::kModelSetting, ""), kvs::Error);
  std::ofstream(config_) << "{not json";
  EXPECT_THROW(kvs::resolve_setting(kvs::kModelSetting, ""), kvs::Error);
  setenv("KVSEARCH_CONFIG", "/nonexistent/kvsearch.json", 1);
  EXPECT_THROW(kvs::resolve_setting(kvs::kModelSetting, ""), kvs::Error);
}

}  // namespace
