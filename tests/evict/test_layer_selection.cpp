#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "evict/budget.h"
#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "evict/window_params.h"

namespace {

using kvs::evict::Policy;

const kvs::evict::WindowParams& w = kvs::evict::window_params();

// The property of docs/reference.md §1: lambda1 = lambda2 = 0 selects exactly the baseline's
// tokens, every head of every layer, whatever the budget, schedule, granularity and pooling.
TEST(LayerSelection, ZeroLambdasReproduceTheBaselineExactly) {
  at::manual_seed(9);
  const int64_t layers = 6;
  int compared = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const int64_t kv_heads = 2, heads = trial % 2 ? 8 : 2, dim = 16;
    const int64_t n = 90 + 41 * trial;
    const at::Tensor q = at::randn({heads, 8, dim}) * (1 + trial % 3);
    const at::Tensor k = at::randn({kv_heads, n, dim});

    Policy baseline = trial % 3 ? kvs::evict::pyramidkv_policy(16 + 8 * (trial % 5))
                                : kvs::evict::snapkv_policy(16 + 8 * (trial % 5));
    baseline.params.set(w.granularity, std::string(trial % 4 < 2 ? "query_head" : "kv_head"));
    baseline.params.set(w.group_reduce, std::string(trial % 8 < 4 ? "mean" : "max"));
    baseline.params.set(w.pooling, std::string(trial % 5 == 4 ? "avg" : "max"));
    // The same setting under the greedy admission, every term on at zero coefficients.
    nlohmann::json greedy = kvs::evict::policy_to_json(baseline);
    greedy["kind"] = "greedy";
    greedy["terms"] = {{"mean", true}, {"dispersion", true}, {"corr", true}};
    greedy["lambda1"] = kvs::evict::profile_to_json(kvs::evict::Profile::segments({0.0, 0.0, 0.0}));
    greedy["lambda2"] = kvs::evict::profile_to_json(kvs::evict::Profile::curve(0.0, 0.0, 0.0));
    const Policy diverse = kvs::evict::policy_from_json(greedy);
    ASSERT_EQ(diverse.method_name(), "diverse");
    for (int64_t l = 0; l < layers; ++l) {
      const auto kept = kvs::evict::select_layer(q, k, {baseline, diverse}, l, layers);
      ASSERT_EQ(kept.size(), 2u);
      EXPECT_TRUE(at::equal(kept[0], kept[1])) << "trial " << trial << " layer " << l;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 16 * layers);
}

TEST(LayerSelection, KeepsBudgetPositionsAscendingWithTheWindowLast) {
  at::manual_seed(10);
  const int64_t n = 400;
  const at::Tensor q = at::randn({8, 8, 16});
  const at::Tensor k = at::randn({2, n, 16});
  const Policy pyramid = kvs::evict::pyramidkv_policy(32);
  Policy diverse = kvs::evict::global_policy(32, 0.2, -0.3);
  diverse.params.set(w.granularity, std::string("kv_head"));
  const auto budgets =
      kvs::evict::layer_budgets(kvs::evict::window_budget_spec(pyramid.params, 32), n, 4);
  for (int64_t l = 0; l < 4; ++l) {
    const auto kept = kvs::evict::select_layer(q, k, {pyramid}, l, 4).front();
    const auto kv = kvs::evict::select_layer(q, k, {diverse}, l, 4).front();
    EXPECT_EQ(kv.size(0), 2);
    ASSERT_EQ(kept.sizes(), (std::vector<int64_t>{8, budgets.selected[l] + 8}));
    for (const at::Tensor& t : {kept, kv}) {
      EXPECT_TRUE(
          at::equal(t.narrow(1, t.size(1) - 8, 8), at::arange(n - 8, n).expand({t.size(0), 8})));
      EXPECT_TRUE((t.diff(1, 1) > 0).all().item<bool>()) << "not strictly ascending";
    }
  }
}

TEST(LayerSelection, ShortPromptsKeepEverything) {
  const at::Tensor q = at::randn({4, 8, 16});
  const at::Tensor k = at::randn({2, 30, 16});
  Policy kv = kvs::evict::global_policy(64);
  kv.params.set(w.granularity, std::string("kv_head"));
  const auto kept = kvs::evict::select_layer(q, k, {kvs::evict::snapkv_policy(64), kv}, 3, 32);
  EXPECT_TRUE(at::equal(kept[0], at::arange(30).expand({4, 30})));
  EXPECT_TRUE(at::equal(kept[1], at::arange(30).expand({2, 30})));
}

TEST(LayerSelection, RejectsAWindowThatDiffersFromThePolicy) {
  const at::Tensor q = at::randn({4, 6, 16});
  const at::Tensor k = at::randn({2, 300, 16});
  try {
    kvs::evict::select_layer(q, k, {kvs::evict::snapkv_policy(64)}, 0, 32);
    FAIL();
  } catch (const kvs::Error& e) {
    EXPECT_NE(std::string(e.what()).find("window"), std::string::npos) << e.what();
  }
  const at::Tensor q8 = at::randn({4, 8, 16});
  EXPECT_THROW(kvs::evict::select_layer(q8, k, {kvs::evict::snapkv_policy(64)}, 32, 32),
               kvs::Error);
}

// A head-wise row's decode-time layer (PrefillLayer::head_counts): each KV head holds only its last
// head_counts[h] rows, the rows before them padding. adakv's base scores each head over its own
// entries, exactly as on that head's entries alone; nothing of the padding is kept; the layer keeps
// Hkv x B; a method with one count per head refuses such a layer; bad counts are named.
TEST(LayerSelection, RaggedLayersScoreEachHeadOverItsOwnEntries) {
  at::manual_seed(5);
  const int64_t kv_heads = 3, heads = 6, n = 50, d = 8, budget = 12;
  const at::Tensor q = at::randn({heads, 4, d});
  at::Tensor k = at::randn({kv_heads, n, d});
  const std::vector<int64_t> counts = {50, 20, 35};
  // The padding is made to look best to knorm (zero keys: the smallest norms).
  for (int64_t h = 0; h < kv_heads; ++h) k[h].narrow(0, 0, n - counts[size_t(h)]).zero_();
  const Policy adakv = kvs::evict::policy_from_json(
      {{"method", "adakv"}, {"budget", budget}, {"base", {{"method", "knorm"}}}});
  const at::Tensor no_values;
  kvs::model::PrefillLayer layer(0, k, no_values, q);
  layer.head_counts = counts;
  const at::Tensor kept = kvs::evict::select_layer(layer, {adakv}, 2).front();
  const std::vector<int64_t> held = kvs::evict::kept_counts(kept);
  EXPECT_EQ(held[0] + held[1] + held[2], kv_heads * budget);
  for (int64_t h = 0; h < kv_heads; ++h) {
    const at::Tensor row = kept[h];
    const at::Tensor mine = row.masked_select(row.ge(0));
    ASSERT_EQ(mine.numel(), held[size_t(h)]);
    EXPECT_TRUE(mine.ge(n - counts[size_t(h)]).all().item<bool>()) << "head " << h;
    // The head's kept entries are its own held[h] best knorm scores over its entries alone.
    const at::Tensor own = k[h].narrow(0, n - counts[size_t(h)], counts[size_t(h)]);
    const at::Tensor best = std::get<1>(own.norm(2, {-1}).neg().topk(held[size_t(h)]));
    EXPECT_TRUE(at::equal(std::get<0>(best.sort()) + (n - counts[size_t(h)]), mine))
        << "head " << h;
  }
  EXPECT_THROW(
      kvs::evict::select_layer(
          layer, {kvs::evict::policy_from_json({{"method", "knorm"}, {"budget", budget}})}, 2),
      kvs::Error);
  layer.head_counts = {50, 60, 10};
  try {
    kvs::evict::select_layer(layer, {adakv}, 2);
    FAIL();
  } catch (const kvs::Error& e) {
    EXPECT_NE(std::string(e.what()).find("head_counts"), std::string::npos) << e.what();
  }
}

}  // namespace
