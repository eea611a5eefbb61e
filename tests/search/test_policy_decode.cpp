// The one prefill -> compress -> decode path on a random tiny model: a budget above the prompt
// decodes as the full cache does, compressed rows decode from their own caches, and policies of
// several cache layouts (granularity, window) on one prefill answer as each would alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "evict/policy.h"
#include "model/presets.h"
#include "model/transformer.h"
#include "search/policy_decode.h"

namespace kvs::search {
namespace {

using evict::Policy;

Policy kv_head(Policy p) {
  p.granularity = evict::Granularity::KvHead;
  return p;
}

Policy with_window(Policy p, int64_t window) {
  p.budget.window = window;
  return p;
}

class TinyModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new test::ScratchDir();
    model::MakeModelOptions options;
    options.preset = "tiny";
    options.seed = 3;
    model::make_random_model(scratch_->file("model"), options);
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }

  static model::Transformer load() {
    model::LoadOptions options;
    options.device = "cpu";
    options.dtype = "f32";
    return model::Transformer::load(scratch_->file("model"), options);
  }

  // Greedy tokens of every policy, then of the full cache when asked.
  static std::vector<std::vector<int32_t>> generate(const model::Transformer& model,
                                                    const std::vector<int32_t>& ids,
                                                    const std::vector<Policy>& policies,
                                                    bool full_cache = false) {
    PolicyDecodeOptions options;
    options.greedy.max_new_tokens = 10;
    options.full_cache = full_cache;
    return decode_with_policies(model, ids, policies, options).tokens;
  }

  static std::vector<int32_t> prompt(int length, int multiplier, int vocab) {
    std::vector<int32_t> ids = {1};
    for (int i = 0; i < length; ++i) ids.push_back(3 + (i * multiplier) % vocab);
    return ids;
  }

  static test::ScratchDir* scratch_;
};
test::ScratchDir* TinyModel::scratch_ = nullptr;

TEST_F(TinyModel, BudgetAtLeastThePromptGeneratesAsWithoutEviction) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(47, 7919, 2000);
  const auto expected = generate(model, ids, {}, /*full_cache=*/true).front();
  ASSERT_EQ(expected.size(), 10u);

  const std::vector<Policy> query_heads = {evict::snapkv_policy(48), evict::pyramidkv_policy(64),
                                           evict::global_policy(100, 0.5, 0.3)};
  const std::vector<Policy> kv_heads = {kv_head(evict::snapkv_policy(48)),
                                        kv_head(evict::global_policy(64, -0.2, -0.5))};
  for (const auto& batch : {query_heads, kv_heads}) {
    const auto rows = generate(model, ids, batch);
    ASSERT_EQ(rows.size(), batch.size());
    for (size_t b = 0; b < rows.size(); ++b) EXPECT_EQ(rows[b], expected) << batch[b].name;
  }
}

TEST_F(TinyModel, CompressedRowsDecodeFromTheirOwnCache) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(150, 104729, 3000);
  const Policy small = evict::pyramidkv_policy(16);
  const Policy diverse = evict::global_policy(24, 0.0, -0.5);
  const auto rows = generate(model, ids, {small, diverse, small}, /*full_cache=*/true);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], rows[2]);  // rows do not leak into each other
  for (const auto& r : rows) EXPECT_EQ(r.size(), 10u);
  // Each row is what its policy decodes alone, and eviction changed what the model says: 16 or
  // 24 of 151 prompt entries do not answer as the full cache does.
  EXPECT_EQ(rows[0], generate(model, ids, {small}).front());
  EXPECT_EQ(rows[1], generate(model, ids, {diverse}).front());
  EXPECT_NE(rows[0], rows[3]) << "the 16-entry cache decodes as the full cache: compression ignored";
  EXPECT_NE(rows[1], rows[3]) << "the 24-entry cache decodes as the full cache: compression ignored";
}

// Policies of three layouts (query-head and KV-head granularity, windows 8 and 4) on one prefill:
// each layout decodes in its own batch, the window-4 policies see the last 4 of the 8 window rows,
// and every row answers as its policy does on a prefill of its own.
TEST_F(TinyModel, MixedLayoutsOnOnePrefillAnswerAsEachAlone) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(150, 104729, 3000);
  const std::vector<Policy> policies = {evict::snapkv_policy(20),
                                        with_window(evict::snapkv_policy(20), 4),
                                        kv_head(evict::global_policy(24, 0.3, -0.4)),
                                        with_window(evict::global_policy(24, 0.3, -0.4), 4),
                                        evict::pyramidkv_policy(32)};
  const auto rows = generate(model, ids, policies);
  ASSERT_EQ(rows.size(), policies.size());
  for (size_t p = 0; p < policies.size(); ++p)
    EXPECT_EQ(rows[p], generate(model, ids, {policies[p]}).front()) << "policy " << p;
  // The window is part of the policy: window 4 keeps other entries than window 8.
  EXPECT_NE(rows[0], rows[1]);
}

TEST_F(TinyModel, RefusesNothingToDecodeAndLogitsOfSeveralRows) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(20, 7919, 2000);
  PolicyDecodeOptions options;
  EXPECT_THROW(decode_with_policies(model, ids, {}, options), Error);
  options.greedy.collect_logits = true;
  const std::vector<Policy> two = {evict::snapkv_policy(16), evict::snapkv_policy(12)};
  EXPECT_THROW(decode_with_policies(model, ids, two, options), Error);
}

}  // namespace
}  // namespace kvs::search
