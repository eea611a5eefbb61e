// The generated data as the rest of the project reads it: every prompt within its target and at
// least 90% of it in the given tokenizer (counted as `kvsearch run` builds the prompt), and
// byte-identical files for one seed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/scratch_dir.h"
#include "core/checkpoint.h"
#include "core/error.h"
#include "longbench/config.h"
#include "longbench/dataset.h"
#include "longbench/prompt.h"
#include "ruler/tasks.h"
#include "ruler/writer.h"
#include "tokenizer/test_support.h"
#include "tokenizer/tokenizer.h"

namespace kvs::ruler {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

RulerDataOptions options(const std::string& model, const fs::path& out, uint64_t seed) {
  RulerDataOptions o;
  o.model = model;
  o.out_dir = out.string();
  o.lengths = {1024, 2048};
  o.count = 3;
  o.seed = seed;
  return o;
}

void expect_prompts_fit(const std::string& tokenizer_file, const std::string& chat) {
  test::ScratchDir dir;
  const auto result = write_ruler_data(options(tokenizer_file, dir.path(), 5));
  EXPECT_EQ(result.chat_template, chat);
  EXPECT_EQ(result.datasets.size(), 22u);  // 11 tasks x 2 lengths; qa skipped
  EXPECT_EQ(result.notes.size(), 2u);
  const auto tok = tokenizer::load_tokenizer_file(tokenizer_file);
  const longbench::Config config = longbench::load_config(dir.path());
  longbench::PromptOptions prompt_options;
  prompt_options.max_length = 1 << 20;
  for (const auto& d : result.datasets) {
    const auto records = longbench::load_dataset(dir.path(), d.dataset);
    ASSERT_EQ(records.size(), 3u) << d.dataset;
    const int64_t target = std::stoll(d.dataset.substr(d.dataset.rfind('_') + 1));
    const int64_t to_generate = config.max_new_tokens_for(d.dataset);
    for (const auto& r : records) {
      // What `kvsearch run` feeds the model: the declared wrapper, the task text, the prefix.
      const auto prompt = longbench::build_prompt(*tok, config, d.dataset, r, prompt_options);
      const int64_t length = static_cast<int64_t>(prompt.ids.size()) + to_generate;
      EXPECT_EQ(length, r.length) << d.dataset;
      EXPECT_LE(length, target) << d.dataset;
      EXPECT_GE(length * 10, target * 9) << d.dataset;
      EXPECT_FALSE(r.answer_prefix.empty()) << d.dataset;
      for (const auto& a : r.answers) EXPECT_NE(r.context.find(a), std::string::npos) << d.dataset;
    }
  }
}

TEST(RulerWriter, EveryPromptFitsItsTargetInMistralTokens) {
  expect_prompts_fit(test::mistral_model_path(), "none");
}

TEST(RulerWriter, EveryPromptFitsItsTargetInLlama3TokensWithItsWrapper) {
  expect_prompts_fit(test::llama3_model_path(), "llama3");
}

TEST(RulerWriter, EveryPromptFitsItsTargetInSmolLM2GgufTokensWithItsChatML) {
  std::string gguf;
  try {
    gguf = resolve_checkpoint("smollm2-135m").path;
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  expect_prompts_fit(gguf, "smollm2");
}

TEST(RulerWriter, SameSeedByteIdenticalOtherSeedDifferent) {
  test::ScratchDir a, b, c;
  auto o = options(test::mistral_model_path(), a.path(), 11);
  o.lengths = {1024};
  o.count = 2;
  write_ruler_data(o);
  o.out_dir = b.path();
  write_ruler_data(o);
  o.out_dir = c.path();
  o.seed = 12;
  write_ruler_data(o);
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(a.path())) {
    if (!entry.is_regular_file()) continue;
    const auto relative = fs::relative(entry.path(), a.path());
    EXPECT_EQ(read(entry.path()), read(b / relative)) << relative;
    if (relative.parent_path() == "data") {
      EXPECT_NE(read(entry.path()), read(c / relative)) << relative;
    }
    ++files;
  }
  EXPECT_EQ(files, 11u + 5u);  // data files, 4 config files and ruler_generation.json
}

TEST(RulerWriter, BadInputWritesNothing) {
  test::ScratchDir dir;
  const fs::path out = dir / "out";
  auto o = options(test::mistral_model_path(), out, 1);
  o.tasks = {"niah_single_1", "niah_nonsense"};
  EXPECT_THROW(write_ruler_data(o), Error);
  o.tasks = {"cwe"};
  o.lengths = {1024, 200};
  try {
    write_ruler_data(o);
    FAIL() << "a length below the template was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--lengths: 200 tokens is below"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace kvs::ruler
