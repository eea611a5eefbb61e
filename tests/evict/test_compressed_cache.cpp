#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "evict/compressed_cache.h"
#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "model/generate.h"
#include "model/presets.h"
#include "model/transformer.h"
#include "scratch_dir.h"

namespace {

using kvs::evict::CompressingObserver;
using kvs::evict::Policy;

Policy kv_head(Policy p) {
  p.granularity = kvs::evict::Granularity::KvHead;
  return p;
}

TEST(CompressedCache, EachRowHoldsItsPolicysEntriesInPositionOrder) {
  at::manual_seed(11);
  const int64_t layers = 3, heads = 4, kv_heads = 2, n = 200, dim = 8;
  const std::vector<Policy> policies = {kvs::evict::snapkv_policy(24),
                                        kvs::evict::pyramidkv_policy(40),
                                        kvs::evict::global_policy(32, 0.1, -0.2)};
  CompressingObserver observer(policies, layers, /*decode_capacity=*/5);
  EXPECT_EQ(observer.window(), 8);
  std::vector<at::Tensor> keys, values, queries;
  for (int64_t l = 0; l < layers; ++l) {
    keys.push_back(at::randn({kv_heads, n, dim}));
    values.push_back(at::randn({kv_heads, n, dim}));
    queries.push_back(at::randn({heads, 8, dim}));
    observer.on_layer(kvs::model::PrefillLayer{l, keys[l], values[l], queries[l]});
  }
  const kvs::model::DecodeCache cache = observer.take_cache();
  EXPECT_EQ(cache.batch, 3);
  EXPECT_EQ(cache.next_position, n);  // decode RoPE continues from the prompt length
  ASSERT_EQ(cache.layers.size(), 3u);
  for (int64_t l = 0; l < layers; ++l) {
    const auto& layer = cache.layers[l];
    const auto kept = kvs::evict::select_layer(queries[l], keys[l], policies, l, layers);
    int64_t longest = 0;
    for (const auto& k : kept) longest = std::max(longest, k.size(1));
    EXPECT_EQ(layer.prefix_len, longest);
    EXPECT_EQ(layer.keys.size(1), heads);  // query_head granularity: one copy per query head
    EXPECT_GE(layer.keys.size(2), longest + 5);
    for (int64_t b = 0; b < 3; ++b) {
      const int64_t count = kept[b].size(1), pad = longest - count;
      for (int64_t h = 0; h < heads; ++h) {
        const at::Tensor expected_k = keys[l][h / 2].index_select(0, kept[b][h]);
        const at::Tensor expected_v = values[l][h / 2].index_select(0, kept[b][h]);
        EXPECT_TRUE(at::equal(layer.keys[b][h].narrow(0, pad, count), expected_k)) << l << b << h;
        EXPECT_TRUE(at::equal(layer.values[b][h].narrow(0, pad, count), expected_v)) << l << b << h;
      }
    }
  }
  EXPECT_EQ(observer.kept_entries()[0], 3 * 24);
}

TEST(CompressedCache, RejectsMixedLayoutsAndMissingLayers) {
  EXPECT_THROW(CompressingObserver(
                   {kvs::evict::snapkv_policy(64), kv_head(kvs::evict::snapkv_policy(64))}, 4, 0),
               kvs::Error);
  Policy w4 = kvs::evict::snapkv_policy(64);
  w4.budget.window = 4;
  EXPECT_THROW(CompressingObserver({kvs::evict::snapkv_policy(64), w4}, 4, 0), kvs::Error);
  EXPECT_THROW(CompressingObserver({}, 4, 0), kvs::Error);
  CompressingObserver observer({kvs::evict::snapkv_policy(64)}, 2, 0);
  const at::Tensor k = at::randn({2, 100, 8}), q = at::randn({4, 8, 8});
  observer.on_layer(kvs::model::PrefillLayer{0, k, k, q});
  EXPECT_THROW(observer.take_cache(), kvs::Error);
  EXPECT_THROW(observer.on_layer(kvs::model::PrefillLayer{2, k, k, q}), kvs::Error);
}

class TinyModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new kvs::test::ScratchDir();
    kvs::model::MakeModelOptions options;
    options.preset = "tiny";
    options.seed = 3;
    kvs::model::make_random_model(scratch_->file("model"), options);
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }

  static kvs::model::Transformer load() {
    kvs::model::LoadOptions options;
    options.device = "cpu";
    options.dtype = "f32";
    return kvs::model::Transformer::load(scratch_->file("model"), options);
  }

  // Greedy tokens of every row when the prompt's cache is compressed by `policies`.
  static std::vector<std::vector<int32_t>> generate(const kvs::model::Transformer& model,
                                                    const std::vector<int32_t>& ids,
                                                    const std::vector<Policy>& policies) {
    CompressingObserver observer(policies, model.config().num_hidden_layers, 10);
    kvs::model::PrefillOptions options;
    options.observer = &observer;
    options.keep_cache = false;
    const auto prefill = model.prefill(ids, options);
    kvs::model::DecodeCache cache = observer.take_cache();
    const at::Tensor first =
        prefill.logits.expand({static_cast<int64_t>(policies.size()), prefill.logits.size(-1)});
    kvs::model::GreedyOptions greedy;
    greedy.max_new_tokens = 10;
    return kvs::model::greedy_decode(model, cache, first, greedy).tokens;
  }

  static kvs::test::ScratchDir* scratch_;
};
kvs::test::ScratchDir* TinyModel::scratch_ = nullptr;

TEST_F(TinyModel, BudgetAtLeastThePromptGeneratesAsWithoutEviction) {
  const kvs::model::Transformer model = load();
  std::vector<int32_t> ids = {1};
  for (int i = 0; i < 47; ++i) ids.push_back(3 + (i * 7919) % 2000);
  kvs::model::PrefillOptions plain;
  plain.decode_capacity = 10;
  auto full = model.prefill(ids, plain);
  kvs::model::GreedyOptions greedy;
  greedy.max_new_tokens = 10;
  const auto expected =
      kvs::model::greedy_decode(model, full.cache, full.logits, greedy).tokens.front();
  ASSERT_EQ(expected.size(), 10u);

  const std::vector<Policy> query_heads = {kvs::evict::snapkv_policy(48),
                                           kvs::evict::pyramidkv_policy(64),
                                           kvs::evict::global_policy(100, 0.5, 0.3)};
  const std::vector<Policy> kv_heads = {kv_head(kvs::evict::snapkv_policy(48)),
                                        kv_head(kvs::evict::global_policy(64, -0.2, -0.5))};
  for (const auto& batch : {query_heads, kv_heads}) {
    const auto rows = generate(model, ids, batch);
    ASSERT_EQ(rows.size(), batch.size());
    for (size_t b = 0; b < rows.size(); ++b) EXPECT_EQ(rows[b], expected) << batch[b].name;
  }
}

TEST_F(TinyModel, CompressedRowsDecodeFromTheirOwnCache) {
  const kvs::model::Transformer model = load();
  std::vector<int32_t> ids = {1};
  for (int i = 0; i < 150; ++i) ids.push_back(3 + (i * 104729) % 3000);
  const Policy small = kvs::evict::pyramidkv_policy(16);
  const Policy diverse = kvs::evict::global_policy(24, 0.0, -0.5);
  const auto rows = generate(model, ids, {small, diverse, small});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], rows[2]);  // rows do not leak into each other
  for (const auto& r : rows) EXPECT_EQ(r.size(), 10u);
}

}  // namespace
