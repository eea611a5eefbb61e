// random: the kept sets are the B best of U[0, 1) draws from a generator seeded at every layer,
// reproducible by seed, B per KV head in position order, and unbiased over positions. kvpress's
// RandomPress is its oracle in ../test_methods_vs_kvpress.py.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "evict/layer_selection.h"
#include "evict/policy.h"

namespace kvs::test {
namespace {

evict::Policy random_policy(int64_t budget, int64_t seed) {
  return evict::policy_from_json({{"method", "random"}, {"budget", budget}, {"seed", seed}});
}

at::Tensor kept(const evict::Policy& policy, const at::Tensor& keys, int64_t layer) {
  const at::Tensor queries = at::randn({4, 1, keys.size(2)});
  return evict::select_layer(queries, keys, {policy}, layer, 4).front();
}

TEST(RandomMethod, KeepsTheBestOfTheSeededDrawsAtEveryLayer) {
  at::manual_seed(1);
  const at::Tensor keys = at::randn({2, 300, 16});
  const evict::Policy policy = random_policy(40, 7);
  // The draws torch.rand makes after a generator seeded with 7, as kvpress's RandomPress(seed=7).
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(7);
  const at::Tensor draws = at::rand({2, 300}, generator);
  const at::Tensor expected = std::get<0>(std::get<1>(draws.topk(40, 1)).sort(1));
  for (int64_t layer = 0; layer < 4; ++layer) {
    const at::Tensor k = kept(policy, keys, layer);
    ASSERT_EQ(k.sizes(), (std::vector<int64_t>{2, 40}));
    EXPECT_TRUE(at::equal(k, expected)) << "layer " << layer;
  }
  EXPECT_TRUE(at::equal(kept(random_policy(40, 7), at::randn({2, 300, 16}), 0), expected))
      << "the keys play no part";
  EXPECT_FALSE(at::equal(kept(random_policy(40, 8), keys, 0), expected)) << "another seed";
}

// Over 400 seeds each position is kept about B / n of the time: no position is favoured.
TEST(RandomMethod, NoPositionIsFavoured) {
  const int64_t n = 100, budget = 25, seeds = 400;
  const at::Tensor keys = at::randn({1, n, 8});
  at::Tensor counts = at::zeros({n}, at::kLong);
  for (int64_t seed = 0; seed < seeds; ++seed)
    counts.index_add_(0, kept(random_policy(budget, seed), keys, 0)[0],
                      at::ones({budget}, at::kLong));
  // Binomial(400, 0.25): mean 100, sd about 8.7; 5 sd either side.
  EXPECT_GE(counts.min().item<int64_t>(), 100 - 44);
  EXPECT_LE(counts.max().item<int64_t>(), 100 + 44);
  EXPECT_EQ(counts.sum().item<int64_t>(), seeds * budget);
}

TEST(RandomMethod, RefusesANegativeSeed) {
  try {
    random_policy(40, -1);
    FAIL() << "a negative seed was taken";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "policy.seed: must be >= 0, got -1");
  }
}

}  // namespace
}  // namespace kvs::test
