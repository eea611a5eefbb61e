// h2o: the recent round(recent_share x B) entries kept, the rest of the budget filled by the best
// plain column sums (the group's mean per KV head, not kvpress's per-query normalisation). Its
// decode-time rule, one eviction per step over the sums of every query seen, is checked against a
// Python reference in tests/decode/test_native_rules.py.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "model/prefill_observer.h"

namespace kvs::test {
namespace {

evict::Policy h2o(int64_t budget, double share) {
  return evict::policy_from_json({{"method", "h2o"}, {"budget", budget}, {"recent_share", share}});
}

// [kv_heads, k] kept positions of one layer with the given column sums [heads, n].
at::Tensor kept(const evict::Policy& policy, const at::Tensor& sums) {
  const int64_t heads = sums.size(0), n = sums.size(1), kv_heads = 2, d = 8;
  const at::Tensor keys = at::randn({kv_heads, n, d}), values = at::randn({kv_heads, n, d});
  const at::Tensor window = at::randn({heads, 1, d});
  model::PrefillLayer layer{0, keys, values, window};
  layer.column_sums = sums;
  return evict::select_layer(layer, {policy}, 4).front();
}

TEST(H2oMethod, KeepsTheRecentWindowAndTheHeaviestOfTheRest) {
  at::manual_seed(3);
  const int64_t heads = 6, n = 200, budget = 40;
  const at::Tensor sums = at::rand({heads, n});
  const at::Tensor k = kept(h2o(budget, 0.5), sums);
  ASSERT_EQ(k.sizes(), (std::vector<int64_t>{2, budget}));
  // Per KV head: the last 20 positions, then the 20 best group means among the first 180.
  const at::Tensor mean = sums.view({2, 3, n}).mean(1);
  for (int64_t h = 0; h < 2; ++h) {
    std::set<int64_t> want;
    for (int64_t i = n - 20; i < n; ++i) want.insert(i);
    const at::Tensor top = std::get<1>(mean[h].narrow(0, 0, n - 20).topk(20));
    for (int64_t i = 0; i < 20; ++i) want.insert(top[i].item<int64_t>());
    std::set<int64_t> got;
    for (int64_t i = 0; i < budget; ++i) got.insert(k[h][i].item<int64_t>());
    EXPECT_EQ(got, want) << "KV head " << h;
  }
}

TEST(H2oMethod, TheSumIsPlainAndTheShareMovesTheWindow) {
  // Early keys are seen by more queries: a plain sum favours them, which H2O's code does.
  const int64_t n = 50;
  const at::Tensor sums = at::arange(n, 0, -1, at::kFloat).unsqueeze(0).repeat({6, 1});
  const at::Tensor heavy = kept(h2o(10, 0.0), sums);
  EXPECT_TRUE(at::equal(heavy[0], at::arange(10, at::kLong))) << heavy[0];
  const at::Tensor recent = kept(h2o(10, 1.0), sums);
  EXPECT_TRUE(at::equal(recent[1], at::arange(n - 10, n, at::kLong))) << recent[1];
}

}  // namespace
}  // namespace kvs::test
