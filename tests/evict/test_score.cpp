#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "evict/policy.h"
#include "evict/score.h"
#include "evict/window_params.h"

namespace {

using kvs::evict::Policy;
using kvs::evict::WindowStats;

const kvs::evict::WindowParams& w() { return kvs::evict::window_params(); }

WindowStats make_stats(const at::Tensor& mu, const at::Tensor& sigma, int64_t kv_heads) {
  WindowStats s;
  s.mu = mu;
  s.sigma = sigma;
  s.kv_heads = kv_heads;
  s.window = 8;
  s.prompt_length = mu.size(1) + 8;
  return s;
}

TEST(Score, MaxPoolingWithNegativeInfinityPadding) {
  Policy p = kvs::evict::snapkv_policy(64);
  p.params.set(w().kernel, int64_t{3});
  const at::Tensor mu = at::tensor({0.f, 5.f, 1.f, 0.f, 0.f, 2.f}).view({1, 6});
  const auto s = kvs::evict::base_scores(make_stats(mu, at::zeros_like(mu), 1), p.params, 0.0);
  EXPECT_TRUE(at::equal(s, at::tensor({5.f, 5.f, 5.f, 1.f, 2.f, 2.f}).view({1, 6})));
  // All-negative scores (the no-mean variant) must not see a zero from the padding.
  const at::Tensor neg = -at::arange(1, 7, at::kFloat).view({1, 6});
  p.params.set(w().mean, false);
  p.params.set(w().dispersion, true);
  const auto n = kvs::evict::base_scores(make_stats(at::zeros_like(neg), neg, 1), p.params, 1.0);
  EXPECT_TRUE(at::equal(n, at::tensor({-1.f, -1.f, -2.f, -3.f, -4.f, -5.f}).view({1, 6})));
}

TEST(Score, AveragePoolingCountsThePadding) {
  Policy p = kvs::evict::snapkv_policy(64);
  p.params.set(w().kernel, int64_t{3});
  p.params.set(w().pooling, std::string("avg"));
  const at::Tensor mu = at::tensor({3.f, 0.f, 0.f, 6.f}).view({1, 4});
  const auto s = kvs::evict::base_scores(make_stats(mu, at::zeros_like(mu), 1), p.params, 0.0);
  EXPECT_TRUE(at::allclose(s, at::tensor({1.f, 1.f, 2.f, 2.f}).view({1, 4})));
}

TEST(Score, CombinesMeanAndDispersionBeforePooling) {
  Policy p = kvs::evict::global_policy(64, 0.5, 0.0);
  p.params.set(w().pooling, std::string("none"));
  at::manual_seed(3);
  const at::Tensor mu = at::rand({4, 20}), sigma = at::rand({4, 20});
  const WindowStats st = make_stats(mu, sigma, 2);
  EXPECT_TRUE(at::allclose(kvs::evict::base_scores(st, p.params, 0.5), mu + 0.5 * sigma));
  // lambda1 = 0 gives exactly mu, bit for bit (the exactness of the baselines).
  EXPECT_TRUE(at::equal(kvs::evict::base_scores(st, p.params, 0.0), mu));
  p.params.set(w().mean, false);
  EXPECT_TRUE(at::allclose(kvs::evict::base_scores(st, p.params, 0.5), 0.5 * sigma));
}

TEST(Score, KvHeadGranularityReducesEachGroup) {
  Policy p = kvs::evict::snapkv_policy(64);
  p.params.set(w().pooling, std::string("none"));
  p.params.set(w().granularity, std::string("kv_head"));
  const at::Tensor mu = at::tensor({1.f, 4.f, 3.f, 2.f, 5.f, 0.f, 1.f, 1.f}).view({4, 2});
  const WindowStats st = make_stats(mu, at::zeros_like(mu), 2);  // heads 0,1 -> kv 0; 2,3 -> kv 1
  EXPECT_EQ(p.cache_heads(4, 2), 2);
  EXPECT_TRUE(at::allclose(kvs::evict::base_scores(st, p.params, 0.0),
                           at::tensor({2.f, 3.f, 3.f, 0.5f}).view({2, 2})));
  p.params.set(w().group_reduce, std::string("max"));
  EXPECT_TRUE(at::equal(kvs::evict::base_scores(st, p.params, 0.0),
                        at::tensor({3.f, 4.f, 5.f, 1.f}).view({2, 2})));
}

}  // namespace
