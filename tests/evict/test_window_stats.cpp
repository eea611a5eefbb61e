#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "cpu/window_stats_avx512.h"
#include "evict/window_stats.h"

namespace {

// The definition of docs/reference.md §1-2 in plain loops, in double precision.
void brute_force(const at::Tensor& q, const at::Tensor& k, std::vector<double>& mu,
                 std::vector<double>& sigma) {
  const int64_t heads = q.size(0), window = q.size(1), dim = q.size(2);
  const int64_t kv_heads = k.size(0), n = k.size(1), group = heads / kv_heads, m = n - window;
  const auto qa = q.accessor<float, 3>();
  const auto ka = k.accessor<float, 3>();
  mu.assign(static_cast<size_t>(heads * m), 0);
  sigma.assign(static_cast<size_t>(heads * m), 0);
  for (int64_t h = 0; h < heads; ++h) {
    std::vector<std::vector<double>> a(static_cast<size_t>(window),
                                       std::vector<double>(static_cast<size_t>(n)));
    for (int64_t w = 0; w < window; ++w) {
      const int64_t position = n - window + w;
      double top = -1e300;
      for (int64_t j = 0; j <= position; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < dim; ++e)
          dot += static_cast<double>(qa[h][w][e]) * ka[h / group][j][e];
        a[w][j] = dot / std::sqrt(static_cast<double>(dim));
        top = std::max(top, a[w][j]);
      }
      double sum = 0;
      for (int64_t j = 0; j <= position; ++j) sum += std::exp(a[w][j] - top);
      for (int64_t j = 0; j < n; ++j) a[w][j] = j <= position ? std::exp(a[w][j] - top) / sum : 0.0;
    }
    for (int64_t j = 0; j < m; ++j) {
      double mean = 0;
      for (int64_t w = 0; w < window; ++w) mean += a[w][j];
      mean /= window;
      double squares = 0;
      for (int64_t w = 0; w < window; ++w) squares += (a[w][j] - mean) * (a[w][j] - mean);
      mu[h * m + j] = mean;
      sigma[h * m + j] = std::sqrt(squares / (window - 1));
    }
  }
}

TEST(WindowStats, MatchesTheDefinitionWithGqaAndTheWindowMask) {
  at::manual_seed(1);
  for (const auto& [heads, kv_heads, window, n] :
       std::vector<std::array<int64_t, 4>>{{4, 2, 8, 40}, {8, 8, 3, 12}, {6, 1, 5, 30}}) {
    const at::Tensor q = at::randn({heads, window, 16}) * 2;
    const at::Tensor k = at::randn({kv_heads, n, 16});
    const auto stats = kvs::evict::compute_window_stats(q, k);
    ASSERT_EQ(stats.mu.sizes(), (std::vector<int64_t>{heads, n - window}));
    ASSERT_EQ(stats.sigma.sizes(), stats.mu.sizes());
    EXPECT_EQ(stats.scorable(), n - window);
    EXPECT_EQ(stats.kv_heads, kv_heads);
    std::vector<double> mu, sigma;
    brute_force(q, k, mu, sigma);
    const auto ma = stats.mu.accessor<float, 2>();
    const auto sa = stats.sigma.accessor<float, 2>();
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t j = 0; j < n - window; ++j) {
        EXPECT_NEAR(ma[h][j], mu[h * (n - window) + j], 1e-6) << h << "," << j;
        EXPECT_NEAR(sa[h][j], sigma[h * (n - window) + j], 1e-6) << h << "," << j;
      }
    }
  }
}

// The ATen CPU path (one KV head per task, for CPUs without AVX-512) gives the plain-ATen
// reference's floats bit for bit: GQA groups of 1 to 4, a KV head count that splits unevenly over
// the threads, the bench's W = 8 and head_dim 128, in and out of inference mode.
TEST(WindowStats, AtenCpuPathEqualsTheReferenceBitForBit) {
  at::manual_seed(4);
  const int saved_threads = at::get_num_threads();
  at::set_num_threads(2);
  for (const auto& [heads, kv_heads, window, n, dim] :
       std::vector<std::array<int64_t, 5>>{{32, 8, 8, 3000, 128}, {9, 3, 8, 777, 64},
                                           {4, 4, 5, 64, 16}, {6, 1, 2, 40, 8}}) {
    const at::Tensor q = at::randn({heads, window, dim}) * 3;
    const at::Tensor k = at::randn({kv_heads, n, dim});
    for (const bool inference : {false, true}) {
      c10::InferenceMode guard(inference);
      const auto fused = kvs::evict::compute_window_stats_aten_cpu(q, k);
      const auto reference = kvs::evict::compute_window_stats_reference(q, k);
      EXPECT_TRUE(at::equal(fused.mu, reference.mu)) << heads << "/" << kv_heads << " n " << n;
      EXPECT_TRUE(at::equal(fused.sigma, reference.sigma)) << heads << "/" << kv_heads << " n " << n;
      EXPECT_EQ(fused.kv_heads, kv_heads);
      EXPECT_EQ(fused.window, window);
    }
  }
  at::set_num_threads(saved_threads);
}

// The AVX-512 kernel against the float64 definition, beside the reference's own error: rows of
// the GQA group that fill one, two or seven vectors of 16 (the last one short), the head widths
// it compiles for (64, 128) and others, prompts just past the window and not a multiple of the
// 12- and 16-key blocks. Its error stays within the reference's order (both are float32 with their
// own summation and exp) and far below the gaps that decide a selection.
TEST(WindowStats, Avx512KernelMatchesTheDefinitionAsCloselyAsTheReference) {
  if (!kvs::cpu::window_stats_avx512_available()) GTEST_SKIP() << "no AVX-512F on this CPU";
  at::manual_seed(5);
  const int saved_threads = at::get_num_threads();
  at::set_num_threads(2);
  for (const auto& [heads, kv_heads, window, n, dim] : std::vector<std::array<int64_t, 5>>{
           {32, 8, 8, 3000, 128}, {9, 3, 8, 777, 64}, {16, 2, 8, 100, 64}, {6, 1, 5, 41, 32},
           {20, 2, 10, 37, 16}, {4, 4, 3, 4, 24}, {2, 1, 16, 1000, 128}}) {
    const at::Tensor q = at::randn({heads, window, dim}) * 3;
    const at::Tensor k = at::randn({kv_heads, n, dim});
    const auto kernel = kvs::evict::compute_window_stats(q, k);
    const auto reference = kvs::evict::compute_window_stats_reference(q, k);
    ASSERT_EQ(kernel.mu.sizes(), reference.mu.sizes());
    std::vector<double> mu, sigma;
    brute_force(q, k, mu, sigma);
    // Errors relative to the head's largest mean weight, the scale its selection compares at.
    const auto worst = [&](const at::Tensor& values, const std::vector<double>& exact) {
      const auto a = values.accessor<float, 2>();
      const int64_t m = n - window;
      double error = 0;
      for (int64_t h = 0; h < heads; ++h) {
        double scale = 0;
        for (int64_t j = 0; j < m; ++j) scale = std::max(scale, mu[h * m + j]);
        for (int64_t j = 0; j < m; ++j)
          error = std::max(error, std::abs(a[h][j] - exact[h * m + j]) / scale);
      }
      return error;
    };
    const std::string shape = std::to_string(heads) + "/" + std::to_string(kv_heads) + " W " +
                              std::to_string(window) + " n " + std::to_string(n) + " d " +
                              std::to_string(dim);
    EXPECT_LE(worst(kernel.mu, mu), std::max(2 * worst(reference.mu, mu), 1e-6)) << shape;
    EXPECT_LE(worst(kernel.sigma, sigma), std::max(2 * worst(reference.sigma, sigma), 1e-6))
        << shape;
    EXPECT_LE(worst(kernel.mu, mu), 3e-5) << shape;
    EXPECT_LE(worst(kernel.sigma, sigma), 3e-5) << shape;
  }
  at::set_num_threads(saved_threads);
}

TEST(WindowStats, AcceptsHalfPrecisionInputs) {
  at::manual_seed(2);
  const at::Tensor q = at::randn({4, 8, 32});
  const at::Tensor k = at::randn({2, 50, 32});
  const auto full = kvs::evict::compute_window_stats(q, k);
  const auto half = kvs::evict::compute_window_stats(q.to(at::kBFloat16), k.to(at::kBFloat16));
  EXPECT_EQ(half.mu.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(half.mu, full.mu, 0.1, 1e-3));
}

TEST(WindowStats, RejectsBadShapes) {
  const auto error = [](const at::Tensor& q, const at::Tensor& k) -> std::string {
    try {
      kvs::evict::compute_window_stats(q, k);
    } catch (const kvs::Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error(at::zeros({4, 8}), at::zeros({2, 20, 16})).find("window_queries"),
            std::string::npos);
  EXPECT_NE(error(at::zeros({3, 8, 16}), at::zeros({2, 20, 16})).find("multiple"),
            std::string::npos);
  EXPECT_NE(error(at::zeros({4, 8, 16}), at::zeros({2, 20, 8})).find("head_dim"),
            std::string::npos);
  EXPECT_NE(error(at::zeros({4, 8, 16}), at::zeros({2, 8, 16})).find("window"), std::string::npos);
  EXPECT_NE(error(at::zeros({4, 8, 16}, at::kLong), at::zeros({2, 20, 16})).find("floating"),
            std::string::npos);
}

}  // namespace
