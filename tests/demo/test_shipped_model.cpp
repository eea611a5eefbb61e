// The checkpoint shipped in data/demo/model: the runner loads it, it is small, and it reproduces the
// full-cache scores its training log recorded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/scratch_dir.h"
#include "demo/demo_training.h"
#include "demo/longbench_writer.h"
#include "demo/tasks.h"
#include "model/runtime.h"
#include "model/transformer.h"
#include "search/run.h"
#include "store/store.h"
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
  const test::ScratchDir data;
  write_demo_longbench({data.path(), 42, 400});
  ASSERT_FALSE(log.at("evaluation").empty());
  for (const auto& recorded : log.at("evaluation")) {
    const int64_t limit = recorded.at("questions").get<int64_t>();
    const TaskScore score = full_cache_test_score(model_dir.string(), data.path(),
                                                  recorded.at("dataset").get<std::string>(), limit);
    EXPECT_EQ(score.questions, limit);
    EXPECT_DOUBLE_EQ(score.score, recorded.at("full_cache_score").get<double>()) << score.dataset;
  }
}

// `kvsearch demo train` scores its model through the path of `kvsearch run`: its full-cache
// predictions are those of a run whose budget keeps every entry (what `make demo` records as the
// full-cache reference), question by question.
TEST(DemoShippedModel, FullCachePredictionsAreThoseOfAKvsearchRun) {
  const fs::path model_dir = demo_dir() / "model";
  const test::ScratchDir dir;
  const std::string data = dir.file("longbench");
  write_demo_longbench({data, 42, 200});
  const std::string dataset = "demo_passage_retrieval";
  const TaskScore demo = full_cache_test_score(model_dir.string(), data, dataset, 0);
  ASSERT_EQ(demo.predictions.size(), 100u);

  search::RunRequest run;
  run.session.model_dir = model_dir.string();
  run.session.longbench_dir = data;
  run.session.dataset = dataset;
  run.family = "baseline";
  run.budget = 100000;
  run.db_path = dir.file("runs.db");
  run.limit_dev = 1;
  run.eval_test = true;
  run.session.load.device = "cpu";
  run.session.load.dtype = "f32";
  const search::RunSummary summary = search::run_search(run);
  EXPECT_DOUBLE_EQ(summary.test_score, demo.score);

  store::Store db(run.db_path, store::Access::read_only);
  const std::optional<store::State> state = db.last_accepted(*db.get_run(summary.run_id));
  ASSERT_TRUE(state.has_value());
  std::vector<store::PredictionRecord> test = db.predictions_of(*state, "test");
  std::sort(test.begin(), test.end(), [](const auto& a, const auto& b) { return a.question_index < b.question_index; });
  ASSERT_EQ(test.size(), demo.predictions.size());
  for (size_t q = 0; q < test.size(); ++q) EXPECT_EQ(test[q].prediction, demo.predictions[q]) << "question " << q;
}

}  // namespace
}  // namespace kvs::demo
