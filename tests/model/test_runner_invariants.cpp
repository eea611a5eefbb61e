// Invariants of the runner that need no outside reference: chunked prefill equals unchunked,
// prefill of a prefix + extend() of the rest equals the full prefill, prefill + decode equals
// recomputing the whole sequence, a batch of identical rows decodes like one row, and rows that
// stop early leave the batch without changing the others' tokens. Each runs
// with full attention and with a sliding window shorter than the prompt.
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "model/attention.h"
#include "model/config.h"
#include "model/generate.h"
#include "model/model_test_util.h"

namespace kvs::test {
namespace {

using kvs::model::AttentionBackend;
using kvs::model::PrefillOptions;

// Different blockings only reorder fp32 sums; the logits are O(1).
constexpr double kTolerance = 2e-5;

struct Case {
  std::string name;
  int64_t sliding_window;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RunnerInvariants : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<ScratchDir>("inv_" + GetParam().name);
    make_checkpoint(dir_->path(), "tiny", 21, GetParam().sliding_window);
    prompt_ = random_ids(37, 32000, 77);
  }

  void report(const std::string& what, double diff) {
    std::cout << "[measured] " << GetParam().name << " " << what << " max|diff| = " << diff << "\n";
    RecordProperty(what, std::to_string(diff));
  }

  kvs::model::PrefillResult prefill(const kvs::model::Transformer& model,
                                    const std::vector<int32_t>& ids, AttentionBackend backend,
                                    int64_t block, bool keep_cache = true) {
    PrefillOptions options;
    options.attention = backend;
    options.block_size = block;
    options.all_logits = true;
    options.keep_cache = keep_cache;
    return model.prefill(ids, options);
  }

  std::unique_ptr<ScratchDir> dir_;
  std::vector<int32_t> prompt_;
};

TEST_P(RunnerInvariants, ChunkedPrefillEqualsUnchunked) {
  const auto model = load_f32(dir_->path());
  const int64_t n = static_cast<int64_t>(prompt_.size());
  // The reference: one block holding the whole prompt.
  const auto whole = prefill(model, prompt_, AttentionBackend::Blocked, n);
  struct Variant {
    std::string name;
    AttentionBackend backend;
    int64_t block;
  };
  std::vector<Variant> variants = {{"blocked_1", AttentionBackend::Blocked, 1},
                                   {"blocked_5", AttentionBackend::Blocked, 5},
                                   {"blocked_16", AttentionBackend::Blocked, 16},
                                   {"auto_default", AttentionBackend::Auto, 1024},
                                   {"auto_7", AttentionBackend::Auto, 7}};
  if (kvs::model::sdpa_available() && GetParam().sliding_window == 0) {
    variants.push_back({"sdpa", AttentionBackend::Sdpa, 1024});
    variants.push_back({"sdpa_block_3", AttentionBackend::Sdpa, 3});
  }
  for (const auto& v : variants) {
    SCOPED_TRACE(v.name);
    const auto got = prefill(model, prompt_, v.backend, v.block);
    const double diff = max_abs_diff(got.logits, whole.logits);
    report("chunked_" + v.name, diff);
    EXPECT_LE(diff, kTolerance);
    ASSERT_EQ(got.cache.layers.size(), whole.cache.layers.size());
    for (size_t l = 0; l < got.cache.layers.size(); ++l) {
      const auto& a = got.cache.layers[l];
      const auto& b = whole.cache.layers[l];
      ASSERT_EQ(a.used, n);
      EXPECT_LE(max_abs_diff(a.keys.narrow(2, 0, n), b.keys.narrow(2, 0, n)), kTolerance);
      EXPECT_LE(max_abs_diff(a.values.narrow(2, 0, n), b.values.narrow(2, 0, n)), kTolerance);
    }
  }
}

TEST_P(RunnerInvariants, SdpaRefusesAWindowThatCutsThePrompt) {
  if (GetParam().sliding_window == 0 || !kvs::model::sdpa_available()) GTEST_SKIP();
  const auto model = load_f32(dir_->path());
  EXPECT_THROW(prefill(model, prompt_, AttentionBackend::Sdpa, 1024), kvs::Error);
}

TEST_P(RunnerInvariants, PrefixPrefillPlusExtendEqualsFullPrefill) {
  const auto model = load_f32(dir_->path());
  const int64_t n = static_cast<int64_t>(prompt_.size());
  const auto full = prefill(model, prompt_, AttentionBackend::Auto, 1024, false);
  // Several ways to split the tail, with multi-token extends longer than the window.
  const std::vector<std::vector<int64_t>> splits = {{20, 17}, {20, 5, 1, 11}, {1, 36}, {30, 1, 1, 5}};
  for (const auto& split : splits) {
    std::string label = "split";
    for (int64_t s : split) label += "_" + std::to_string(s);
    SCOPED_TRACE(label);
    const int64_t prefix = split[0];
    const std::vector<int32_t> head(prompt_.begin(), prompt_.begin() + prefix);
    auto pre = prefill(model, head, AttentionBackend::Auto, 1024);
    std::vector<at::Tensor> rows = {pre.logits};
    int64_t pos = prefix;
    for (size_t i = 1; i < split.size(); ++i) {
      std::vector<int64_t> chunk(prompt_.begin() + pos, prompt_.begin() + pos + split[i]);
      const at::Tensor tokens = at::tensor(chunk, at::kLong).view({1, split[i]});
      rows.push_back(model.extend(tokens, pre.cache).squeeze(0));
      pos += split[i];
    }
    ASSERT_EQ(pos, n);
    EXPECT_EQ(pre.cache.next_position, n);
    const double diff = max_abs_diff(at::cat(rows), full.logits);
    report("extend_" + label, diff);
    EXPECT_LE(diff, kTolerance);
  }
}

TEST_P(RunnerInvariants, PrefillPlusDecodeEqualsRecompute) {
  const auto model = load_f32(dir_->path());
  const int64_t n = static_cast<int64_t>(prompt_.size()), steps = 20;
  PrefillOptions options;
  options.decode_capacity = 4;  // fewer than the steps: the cache has to grow on the way
  auto pre = model.prefill(prompt_, options);
  kvs::model::GreedyOptions greedy;
  greedy.max_new_tokens = steps;
  greedy.collect_logits = true;
  const auto out = kvs::model::greedy_decode(model, pre.cache, pre.logits, greedy);
  ASSERT_EQ(static_cast<int64_t>(out.tokens[0].size()), steps);

  std::vector<int32_t> all = prompt_;
  all.insert(all.end(), out.tokens[0].begin(), out.tokens[0].end() - 1);
  const auto recomputed = prefill(model, all, AttentionBackend::Auto, 1024, false);
  const at::Tensor tail = recomputed.logits.narrow(0, n - 1, steps);
  const double diff = max_abs_diff(out.step_logits.select(1, 0), tail);
  report("decode_vs_recompute", diff);
  EXPECT_LE(diff, kTolerance);
  // And the recomputed logits choose the same tokens.
  const at::Tensor chosen = tail.argmax(-1);
  for (int64_t s = 0; s < steps; ++s) EXPECT_EQ(chosen[s].item<int64_t>(), out.tokens[0][s]) << s;
}

TEST_P(RunnerInvariants, BatchOfIdenticalRowsDecodesLikeOneRow) {
  const auto model = load_f32(dir_->path());
  const int64_t steps = 12, batch = 3;
  kvs::model::GreedyOptions greedy;
  greedy.max_new_tokens = steps;
  greedy.collect_logits = true;

  auto single = model.prefill(prompt_, PrefillOptions{});
  const auto one = kvs::model::greedy_decode(model, single.cache, single.logits, greedy);

  auto pre = model.prefill(prompt_, PrefillOptions{});
  kvs::model::DecodeCache cache;
  cache.batch = batch;
  cache.next_position = pre.cache.next_position;
  for (const auto& layer : pre.cache.layers) {
    const at::Tensor k = layer.keys[0].narrow(1, 0, layer.used);
    const at::Tensor v = layer.values[0].narrow(1, 0, layer.used);
    cache.layers.push_back(kvs::model::assemble_layer_cache({{k, v}, {k, v}, {k, v}}, 0));
  }
  const auto many = kvs::model::greedy_decode(model, cache, pre.logits.expand({batch, -1}), greedy);
  ASSERT_EQ(static_cast<int64_t>(many.tokens.size()), batch);
  double diff = 0;
  for (int64_t b = 0; b < batch; ++b) {
    EXPECT_EQ(many.tokens[b], one.tokens[0]) << "row " << b;
    diff = std::max(diff, max_abs_diff(many.step_logits.select(1, b), one.step_logits.select(1, 0)));
  }
  report("batch3_vs_batch1", diff);
  EXPECT_LE(diff, kTolerance);
}

// Rows whose caches keep different prompt entries, so that they decode different tokens. All of
// them are compressed: a full row would see the sliding window alone but not in a padded batch.
kvs::model::DecodeCache cache_of_rows(const kvs::model::DecodeCache& full, const std::vector<int>& rows) {
  kvs::model::DecodeCache cache;
  cache.batch = static_cast<int64_t>(rows.size());
  cache.next_position = full.next_position;
  for (const auto& layer : full.layers) {
    const at::Tensor k = layer.keys[0].narrow(1, 0, layer.used);
    const at::Tensor v = layer.values[0].narrow(1, 0, layer.used);
    const at::Tensor even = at::arange(0, layer.used, 2, at::kLong);
    const at::Tensor odd = at::arange(1, layer.used, 2, at::kLong);
    const std::vector<std::pair<at::Tensor, at::Tensor>> kinds = {
        {k.index_select(1, odd), v.index_select(1, odd)},
        {k.narrow(1, layer.used / 2, layer.used - layer.used / 2), v.narrow(1, layer.used / 2, layer.used - layer.used / 2)},
        {k.index_select(1, even), v.index_select(1, even)}};
    std::vector<std::pair<at::Tensor, at::Tensor>> picked;
    for (int r : rows) picked.push_back(kinds[r]);
    cache.layers.push_back(kvs::model::assemble_layer_cache(picked, 0));
  }
  return cache;
}

TEST_P(RunnerInvariants, RowsThatStopLeaveTheBatchAndTheOthersDecodeAsAlone) {
  const auto model = load_f32(dir_->path());
  const auto pre = model.prefill(prompt_, PrefillOptions{});
  kvs::model::GreedyOptions greedy;
  greedy.max_new_tokens = 12;
  auto alone = [&](int row) {
    kvs::model::DecodeCache cache = cache_of_rows(pre.cache, {row});
    return kvs::model::greedy_decode(model, cache, pre.logits, greedy).tokens[0];
  };
  // A stop id that ends the rows at different steps, so that the batch shrinks mid-decode.
  std::vector<std::vector<int32_t>> expected;
  for (int row = 0; row < 3; ++row) {
    const std::vector<int32_t> tokens = alone(row);
    for (size_t s = 1; s + 1 < tokens.size() && expected.empty(); ++s) {
      greedy.stop_ids = {tokens[s]};
      std::vector<std::vector<int32_t>> ends = {alone(0), alone(1), alone(2)};
      std::set<size_t> lengths;
      for (const auto& e : ends) lengths.insert(e.size());
      if (lengths.size() > 1) expected = ends;
      else greedy.stop_ids.clear();
    }
  }
  ASSERT_FALSE(expected.empty()) << "no token ends the rows at different steps";

  kvs::model::DecodeCache cache = cache_of_rows(pre.cache, {0, 1, 2});
  const auto batched = kvs::model::greedy_decode(model, cache, pre.logits.expand({3, -1}), greedy);
  for (int row = 0; row < 3; ++row) EXPECT_EQ(batched.tokens[row], expected[row]) << "row " << row;
  EXPECT_LT(cache.batch, 3) << "the rows that stopped first are still in the batch";
  // Keeping every step's logits keeps every row in the batch, with the same tokens.
  greedy.collect_logits = true;
  kvs::model::DecodeCache kept = cache_of_rows(pre.cache, {0, 1, 2});
  const auto full_batch = kvs::model::greedy_decode(model, kept, pre.logits.expand({3, -1}), greedy);
  EXPECT_EQ(kept.batch, 3);
  EXPECT_EQ(full_batch.tokens, batched.tokens);
}

// --dtype auto: fp32 on the CPU; on CUDA the architecture's native half type (bf16 for Qwen,
// whose checkpoints are bf16; fp16 for llama and mistral, the paper's setting). A run names what
// it used.
TEST(ModelDtype, AutoIsFp32OnTheCpuAndTheNativeHalfTypeOnCuda) {
  ScratchDir scratch("dtype_auto");
  const std::string dir = make_checkpoint(scratch.file("tiny"), "tiny", 3);
  const auto model = kvs::model::Transformer::load(dir, kvs::model::LoadOptions{"cpu", "auto"});
  EXPECT_EQ(model.dtype_label(), "f32");
  EXPECT_EQ(model.device_label(), "cpu");
  EXPECT_EQ(kvs::model::Transformer::load(dir, {"cpu", "bf16"}).dtype_label(), "bf16");
  kvs::model::ModelConfig c = model.config();
  for (const auto& [type, half] : std::vector<std::pair<std::string, std::string>>{
           {"qwen2", "bf16"}, {"qwen3", "bf16"}, {"llama", "f16"}, {"mistral", "f16"}}) {
    c.model_type = type;
    EXPECT_EQ(kvs::model::native_gpu_dtype(c), half) << type;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, RunnerInvariants,
                         ::testing::Values(Case{"full_attention", 0}, Case{"sliding_window_8", 8}),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace kvs::test
