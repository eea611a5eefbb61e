// The runner against the deliberately naive forward of naive_forward.cpp (independent code):
// prefill logits of every position, prefill + cached decode (Transformer::extend) logits, and
// greedy tokens, in fp32 with max |diff| <= 1e-4. Checkpoints: tiny Mistral (full attention),
// tiny Mistral with a sliding window shorter than the prompt, tiny Llama with llama3 rope scaling.
#include <ATen/ops/full.h>
#include <gtest/gtest.h>

#include <iostream>

#include "model/generate.h"
#include "model/model_test_util.h"
#include "model/naive_forward.h"

namespace kvs::test {
namespace {

constexpr double kTolerance = 1e-4;

struct Case {
  std::string name;
  std::string preset;
  int64_t sliding_window;
  int64_t prompt_len;
  uint64_t seed;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class NaiveReference : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const Case& c = GetParam();
    dir_ = std::make_unique<ScratchDir>("naive_" + c.name);
    make_checkpoint(dir_->path(), c.preset, c.seed, c.sliding_window);
    prompt_ = random_ids(c.prompt_len, 32000, c.seed + 100);
  }

  void report(const std::string& what, double diff) {
    std::cout << "[measured] " << GetParam().name << " " << what << " max|diff| = " << diff << "\n";
    RecordProperty(what, std::to_string(diff));
  }

  std::unique_ptr<ScratchDir> dir_;
  std::vector<int32_t> prompt_;
};

TEST_P(NaiveReference, ConfigIsTheIntendedOne) {
  const auto model = load_f32(dir_->path());
  const Case& c = GetParam();
  EXPECT_EQ(model.config().sliding_window.has_value(), c.sliding_window > 0);
  if (c.sliding_window > 0) {
    EXPECT_LT(*model.config().sliding_window, c.prompt_len) << "the window must cut the prompt";
  }
  EXPECT_EQ(model.config().rope_scaling.has_value(), c.preset == "tiny-llama");
  EXPECT_EQ(model.config().model_type, c.preset == "tiny-llama" ? "llama" : "mistral");
}

TEST_P(NaiveReference, PrefillLogitsOfEveryPosition) {
  const auto model = load_f32(dir_->path());
  kvs::model::PrefillOptions options;
  options.all_logits = true;
  options.keep_cache = false;
  const auto runner = to_rows(model.prefill(prompt_, options).logits);
  NaiveModel naive(dir_->path());
  const auto reference = naive.run(widen(prompt_));
  ASSERT_EQ(runner.size(), prompt_.size());
  const double diff = max_abs_diff(runner, reference);
  report("prefill", diff);
  EXPECT_LE(diff, kTolerance);
}

TEST_P(NaiveReference, PrefillThenCachedDecodeLogits) {
  const auto model = load_f32(dir_->path());
  const int64_t n = static_cast<int64_t>(prompt_.size());
  const std::vector<int32_t> continuation = random_ids(12, 32000, GetParam().seed + 200);
  auto pre = model.prefill(prompt_, kvs::model::PrefillOptions{});
  std::vector<std::vector<float>> runner = to_rows(pre.logits);  // the last prompt row
  for (int32_t token : continuation) {
    const at::Tensor tokens = at::full({1, 1}, static_cast<int64_t>(token), at::kLong);
    runner.push_back(to_rows(model.extend(tokens, pre.cache).view({1, -1}))[0]);
  }
  EXPECT_EQ(pre.cache.next_position, n + static_cast<int64_t>(continuation.size()));

  NaiveModel naive(dir_->path());
  std::vector<int64_t> all = widen(prompt_);
  for (int32_t t : continuation) all.push_back(t);
  const auto full = naive.run(all);
  const std::vector<std::vector<float>> reference(full.begin() + (n - 1), full.end());
  const double diff = max_abs_diff(runner, reference);
  report("decode", diff);
  EXPECT_LE(diff, kTolerance);
}

TEST_P(NaiveReference, GreedyTokens) {
  const auto model = load_f32(dir_->path());
  const int64_t steps = 16;
  kvs::model::PrefillOptions options;
  options.decode_capacity = steps;
  auto pre = model.prefill(prompt_, options);
  kvs::model::GreedyOptions greedy;
  greedy.max_new_tokens = steps;  // no stop ids: always the full length
  greedy.collect_logits = true;
  const auto out = kvs::model::greedy_decode(model, pre.cache, pre.logits, greedy);
  ASSERT_EQ(out.tokens.size(), 1u);
  ASSERT_EQ(static_cast<int64_t>(out.tokens[0].size()), steps);

  NaiveModel naive(dir_->path());
  std::vector<float> row = naive.run(widen(prompt_)).back();
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> reference;
  double smallest_gap = INFINITY;
  for (int64_t s = 0; s < steps; ++s) {
    reference.push_back(row);
    smallest_gap = std::min(smallest_gap, top2_gap(row));
    tokens.push_back(static_cast<int32_t>(argmax(row)));
    row = naive.step(tokens.back());
  }
  EXPECT_EQ(out.tokens[0], tokens) << "smallest top-2 gap of the reference: " << smallest_gap;
  const double diff = max_abs_diff(to_rows(out.step_logits.select(1, 0)), reference);
  report("greedy_steps", diff);
  EXPECT_LE(diff, kTolerance);
  EXPECT_GT(smallest_gap, 10 * kTolerance) << "a near tie makes the token comparison meaningless";
}

// The reference is only worth something if it sees the feature under test: with the window or
// the llama3 scaling switched off, it must disagree with the runner.
TEST_P(NaiveReference, ReferenceIsSensitiveToTheFeature) {
  const Case& c = GetParam();
  if (c.sliding_window == 0 && c.preset != "tiny-llama") GTEST_SKIP() << "no feature to switch off";
  const auto model = load_f32(dir_->path());
  kvs::model::PrefillOptions options;
  options.all_logits = true;
  options.keep_cache = false;
  const auto runner = to_rows(model.prefill(prompt_, options).logits);
  NaiveModel::Options off;
  off.ignore_sliding_window = c.sliding_window > 0;
  off.ignore_rope_scaling = c.preset == "tiny-llama";
  NaiveModel naive(dir_->path(), off);
  const double diff = max_abs_diff(runner, naive.run(widen(prompt_)));
  report("feature_off", diff);
  EXPECT_GT(diff, 1e-2);
}

INSTANTIATE_TEST_SUITE_P(
    Tiny, NaiveReference,
    ::testing::Values(Case{"mistral", "tiny", 0, 24, 11}, Case{"sliding_window", "tiny", 8, 40, 12},
                      Case{"llama3", "tiny-llama", 0, 30, 13}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace kvs::test
