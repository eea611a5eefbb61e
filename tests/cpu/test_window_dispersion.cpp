// cpu::window_dispersion against the ATen expression cake.cpp keeps for caches off the CPU (the
// method as a whole is checked against a float64 reference of cakekv's formulas in
// tests/evict/test_allocators_reference.py).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu/window_dispersion.h"

namespace kvs::test {
namespace {

// Scaled, causally masked window scores [heads, window, n], sharper where `spread` is larger.
at::Tensor window_logits(int64_t heads, int64_t window, int64_t n, double spread) {
  at::Tensor logits = at::randn({heads, window, n}) * spread;
  const at::Tensor future = at::ones({window, window}, at::kBool).triu(1);
  logits.narrow(2, n - window, window)
      .masked_fill_(future, -std::numeric_limits<float>::infinity());
  return logits;
}

TEST(WindowDispersion, EqualsTheAtenExpression) {
  at::manual_seed(3);
  struct Shape {
    int64_t heads, window, n;
    double spread;
  };
  for (const Shape s : {Shape{9, 32, 2000, 2.0}, Shape{2, 2, 5, 1.0}, Shape{4, 8, 300, 12.0},
                        Shape{32, 32, 1500, 0.1}}) {
    const at::Tensor logits = window_logits(s.heads, s.window, s.n, s.spread);
    const at::Tensor attention = at::softmax(logits, -1);
    const double gamma = 200;
    at::Tensor indicator = at::empty({s.heads, s.n - s.window});
    const cpu::WindowDispersion got =
        cpu::window_dispersion(attention.data_ptr<float>(), logits.data_ptr<float>(), s.heads,
                               s.window, s.n, gamma, indicator.data_ptr<float>());

    const at::Tensor a = attention.narrow(2, 0, s.n - s.window).to(at::kDouble);
    const at::Tensor variance = a.var(1, /*unbiased=*/true);
    const double entropy = -(a * at::log(a + 1e-10)).sum().item<double>();
    const at::Tensor want = (a.mean(1) + gamma * variance).to(at::kFloat);
    EXPECT_TRUE(at::allclose(indicator, want, 1e-5, 1e-9))
        << s.n << ": " << (indicator - want).abs().max().item<float>();
    EXPECT_NEAR(got.variance, variance.sum().item<double>(), 1e-5 * variance.sum().item<double>());
    // Within float rounding of the entries, and of the 1e-10 the reference adds in its logarithm.
    EXPECT_NEAR(got.entropy, entropy, 1e-5 * std::abs(entropy) + 1e-10 * double(a.numel())) << s.n;
    EXPECT_GT(got.entropy, 0);
  }
}

TEST(WindowDispersion, UniformRowsHaveNoVarianceAndTheLargestEntropy) {
  const int64_t heads = 2, window = 4, n = 64;
  at::Tensor logits = at::zeros({heads, window, n});
  const at::Tensor attention = at::full({heads, window, n}, 1.0 / double(n));
  at::Tensor indicator = at::empty({heads, n - window});
  const cpu::WindowDispersion got =
      cpu::window_dispersion(attention.data_ptr<float>(), logits.data_ptr<float>(), heads, window,
                             n, 200, indicator.data_ptr<float>());
  EXPECT_NEAR(got.variance, 0, 1e-12);
  // Every row spends (n - window) / n of its mass on the prefix, each entry at log n.
  EXPECT_NEAR(got.entropy, heads * window * (n - window) * std::log(double(n)) / double(n), 1e-4);
  EXPECT_TRUE(at::allclose(indicator, at::full({heads, n - window}, 1.0 / double(n)), 1e-6));
}

}  // namespace
}  // namespace kvs::test
