// The checkpoint shipped in data/demo/model: the runner loads it, it is small, and it reproduces the
// full-cache scores its training log recorded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>


#include "demo/evaluate.h"
#include "demo/longbench_writer.h"
#include "demo/tasks.h"
#include "evict/scratch_dir.h"
#include "model/runtime.h"
#include "model/transformer.h"
#include "tokenizer/tokenizer.h"

namespace kvs::demo {
namespace {

namespace fs = std::filesystem;

fs::path demo_dir() {
  const char* source = std::getenv("KVS_SOURCE_DIR");
  return fs::path(source ? source : KVS_SOURCE_DIR_DEFAULT) / "data" / "demo";
}

TEST(DemoShippedModel, LoadsAndIsSmall) {
  const fs::path model_dir = demo_dir() / "model";
  ASSERT_TRUE(fs::exists(model_dir / "config.json")) << model_dir;
  EXPECT_LE(fs::file_size(model_dir / "model.safetensors"), 20u << 20);
  const auto tok = tokenizer::load_tokenizer(model_dir.string());
  model::LoadOptions load;
  load.device = "cpu";
  const model::Transformer runner = model::Transformer::load(model_dir.string(), load);
  const auto& c = runner.config();
  EXPECT_EQ(c.model_type, "mistral");
  EXPECT_GT(c.num_attention_heads, c.num_key_value_heads) << "GQA";
  EXPECT_EQ(c.vocab_size, tok->vocab_size());
  EXPECT_EQ(c.bos_token_id, 1);
}

// The full-cache test scores recorded in data/demo/train_log.json when the model was trained are
// what the runner computes now, on the same questions of the demo data (seed 42, 400 records).
TEST(DemoShippedModel, ReproducesItsRecordedScores) {
  const fs::path model_dir = demo_dir() / "model";
  std::ifstream in(demo_dir() / "train_log.json");
  ASSERT_TRUE(in.good()) << "data/demo/train_log.json";
  const nlohmann::json log = nlohmann::json::parse(in);
  const auto tok = tokenizer::load_tokenizer(model_dir.string());
  model::LoadOptions load;
  load.device = "cpu";
  const model::Transformer runner = model::Transformer::load(model_dir.string(), load);
  const test::ScratchDir data;
  write_demo_longbench({data.path(), 42, 400});
  ASSERT_FALSE(log.at("evaluation").empty());
  for (const auto& recorded : log.at("evaluation")) {
    EvalOptions o;
    o.longbench_dir = data.path();
    o.limit = recorded.at("questions").get<int64_t>();
    const TaskScore score =
        evaluate_full_cache(runner, *tok, demo_task(recorded.at("dataset").get<std::string>()), o);
    EXPECT_EQ(score.questions, o.limit);
    EXPECT_DOUBLE_EQ(score.score, recorded.at("full_cache_score").get<double>()) << score.dataset;
  }
}

}  // namespace
}  // namespace kvs::demo
