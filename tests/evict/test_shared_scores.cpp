// The scores a batch's policies share on a layer: a budget-free method (MethodInfo::budget_free)
// scores once for all its budgets, a value declared through LayerView::shared is computed once for
// every policy that asks, and a batch of real methods at several budgets keeps what each keeps
// alone. Two counting methods, registered by this file, count the calls.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evict/layer_selection.h"
#include "evict/method.h"
#include "evict/policy.h"
#include "model/prefill_observer.h"

namespace kvs::test {
namespace {

std::atomic<int> scorings{0}, shared_values{0};

const evict::Param<double> kOffset = evict::number_param("offset", 0, -1e9, "added to the score");

// -||k||, plus `offset`; the key norms through LayerView::shared.
at::Tensor counted_scores(const evict::LayerView& view, const evict::Params& params) {
  ++scorings;
  const auto norms = [&] {
    ++shared_values;
    return view.keys.norm(2, {-1});
  };
  const at::Tensor n = view.shared("test_counting norms", norms);
  return (params.get(kOffset) - n).contiguous();
}

class BudgetFreeCounting final : public evict::Method {
 public:
  const evict::MethodInfo& info() const override {
    static const evict::MethodInfo info{.name = "test_counting",
                                        .summary = "counts its scorings (tests only)",
                                        .budget = "kept tokens",
                                        .params = {kOffset.spec},
                                        .budget_free = true};
    return info;
  }
  at::Tensor scores(const evict::LayerView& view, const evict::Params& params) const override {
    return counted_scores(view, params);
  }
};

// The same scores, not declared budget-free: scored once per policy.
class Counting final : public evict::Method {
 public:
  const evict::MethodInfo& info() const override {
    static const evict::MethodInfo info{.name = "test_counting_per_budget",
                                        .summary = "counts its scorings (tests only)",
                                        .budget = "kept tokens",
                                        .params = {kOffset.spec}};
    return info;
  }
  at::Tensor scores(const evict::LayerView& view, const evict::Params& params) const override {
    return counted_scores(view, params);
  }
};

const BudgetFreeCounting budget_free_counting;
const evict::MethodRegistration budget_free_registration(budget_free_counting);
const Counting counting;
const evict::MethodRegistration counting_registration(counting);

evict::Policy policy(const nlohmann::json& j) { return evict::policy_from_json(j, "policy"); }

TEST(SharedScores, ABudgetFreeMethodScoresOncePerLayerForAllItsBudgets) {
  at::manual_seed(5);
  const at::Tensor q = at::randn({4, 8, 16}), k = at::randn({2, 300, 16}),
                   v = at::randn({2, 300, 16});
  const model::PrefillLayer layer(0, k, v, q);
  const std::vector<evict::Policy> policies = {
      policy({{"method", "test_counting"}, {"budget", 16}}),
      policy({{"method", "test_counting"}, {"budget", 64}}),
      policy({{"method", "test_counting"}, {"budget", 128}, {"name", "a label"}}),
      policy({{"method", "test_counting"}, {"budget", 64}, {"offset", 1.5}}),
      policy({{"method", "test_counting_per_budget"}, {"budget", 16}}),
      policy({{"method", "test_counting_per_budget"}, {"budget", 64}})};
  scorings = 0;
  shared_values = 0;
  const std::vector<at::Tensor> kept = evict::select_layer(layer, policies, 4);
  // One scoring for the three budgets of offset 0, one for offset 1.5, two for the method that is
  // not budget-free; the key norms once for all six.
  EXPECT_EQ(scorings.load(), 4);
  EXPECT_EQ(shared_values.load(), 1);
  // Each keeps what it keeps alone.
  for (size_t p = 0; p < policies.size(); ++p) {
    const at::Tensor alone = evict::select_layer(layer, {policies[p]}, 4).front();
    EXPECT_TRUE(at::equal(kept[p], alone)) << p;
    EXPECT_EQ(kept[p].size(1), policies[p].budget) << p;
  }
  EXPECT_TRUE(at::equal(kept[1], kept[5]));  // the same scores and budget, shared or not
}

TEST(SharedScores, RealMethodsAtSeveralBudgetsKeepWhatEachKeepsAlone) {
  at::manual_seed(6);
  const int64_t heads = 6, kv_heads = 2, n = 700, d = 16;
  const at::Tensor q = at::randn({heads, 64, d}), k = at::randn({kv_heads, n, d}) * 1.5 + 0.2;
  const at::Tensor v = at::randn({kv_heads, n, d});
  model::PrefillLayer layer(2, k, v, q);
  layer.output_projection = at::randn({24, heads * d});
  layer.pre_rope_queries = at::randn({heads, n, d});
  layer.rope_inv_freq = at::pow(10000.0, -at::arange(0, d, 2, at::kFloat) / double(d));
  layer.column_sums = at::rand({heads, n}) * 3;
  const nlohmann::json snapkv = {{"method", "snapkv"},
                                 {"window", 64},
                                 {"kernel", 5},
                                 {"pooling", "avg"},
                                 {"granularity", "kv_head"}};
  std::vector<evict::Policy> policies;
  for (int64_t budget : {64, 96, 200}) {
    for (const char* method : {"keydiff", "knorm", "tova", "streaming_llm", "lagkv", "r_kv",
                               "expected_attention", "observed_attention"})
      policies.push_back(policy({{"method", method}, {"budget", budget}}));
    policies.push_back(policy({{"method", "criticalkv"}, {"budget", budget}, {"base", snapkv}}));
    policies.push_back(
        policy({{"method", "criticalkv"}, {"budget", budget}, {"base", {{"method", "keydiff"}}}}));
  }
  const std::vector<at::Tensor> kept = evict::select_layer(layer, policies, 4);
  ASSERT_EQ(kept.size(), policies.size());
  for (size_t p = 0; p < policies.size(); ++p) {
    const at::Tensor alone = evict::select_layer(layer, {policies[p]}, 4).front();
    EXPECT_TRUE(at::equal(kept[p], alone)) << evict::policy_to_string(policies[p]);
  }
}

}  // namespace
}  // namespace kvs::test
