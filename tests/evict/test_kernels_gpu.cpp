// The CUDA kernels against their CPU references. Skips cleanly without a GPU.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <vector>

#include "evict/greedy_select.h"
#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "evict/window_stats.h"

namespace {

#define REQUIRE_GPU() \
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device visible"

TEST(KernelsGpu, WindowStatsMatchTheCpuReference) {
  REQUIRE_GPU();
  at::manual_seed(20);
  for (const auto& [heads, kv_heads, window, n, dim] : std::vector<std::array<int64_t, 5>>{
           {32, 8, 8, 3000, 128}, {4, 4, 3, 50, 16}, {6, 2, 16, 1001, 64}}) {
    const at::Tensor q = at::randn({heads, window, dim}), k = at::randn({kv_heads, n, dim});
    const auto cpu = kvs::evict::compute_window_stats_reference(q, k);
    for (const auto dtype : {at::kFloat, at::kHalf}) {
      const auto gpu =
          kvs::evict::compute_window_stats(q.to(at::kCUDA, dtype), k.to(at::kCUDA, dtype));
      const double tol = dtype == at::kFloat ? 1e-5 : 2e-2;
      EXPECT_TRUE(at::allclose(gpu.mu.cpu(), cpu.mu, tol, 1e-7))
          << heads << "x" << n << " " << dtype;
      EXPECT_TRUE(at::allclose(gpu.sigma.cpu(), cpu.sigma, tol, 1e-7))
          << heads << "x" << n << " " << dtype;
    }
  }
}

TEST(KernelsGpu, GreedyAdmissionMatchesTheCpuLoopExactly) {
  REQUIRE_GPU();
  at::manual_seed(21);
  // Entries in quarters: every dot product is exact in any summation order, so even ties must
  // resolve identically. Ragged rows: candidates and counts vary per row.
  const int64_t rows = 40, width = 300, dim = 128;
  const at::Tensor keys = at::randint(-4, 5, {rows, width, dim}).to(at::kFloat) / 4;
  const at::Tensor scores = at::randint(0, 16, {rows, width}).to(at::kFloat) / 16;
  const at::Tensor candidates = at::randint(100, width + 1, {rows}, at::kLong);
  const at::Tensor counts = at::minimum(at::randint(1, 80, {rows}, at::kLong), candidates);
  for (const float l2 : {0.0f, -0.125f, 0.5f}) {
    const at::Tensor lambda2 = at::full({rows}, l2);
    const at::Tensor cpu = kvs::evict::admit_greedy(keys, scores, candidates, counts, lambda2);
    const at::Tensor gpu = kvs::evict::admit_greedy(keys.cuda(), scores.cuda(), candidates.cuda(),
                                                    counts.cuda(), lambda2.cuda());
    EXPECT_TRUE(at::equal(gpu.cpu(), cpu)) << "lambda2 " << l2;
  }
}

TEST(KernelsGpu, LayerSelectionMatchesTheCpu) {
  REQUIRE_GPU();
  at::manual_seed(22);
  const at::Tensor q = at::randn({32, 8, 128}), k = at::randn({8, 4000, 128});
  std::vector<kvs::evict::Policy> policies = {kvs::evict::pyramidkv_policy(64),
                                              kvs::evict::global_policy(64, 0.2, -0.15),
                                              kvs::evict::global_policy(128, 0.0, 0.4)};
  for (int64_t layer : {0, 17, 31}) {
    const auto cpu = kvs::evict::select_layer(q, k, policies, layer, 32);
    const auto gpu = kvs::evict::select_layer(q.cuda(), k.cuda(), policies, layer, 32);
    for (size_t p = 0; p < policies.size(); ++p) {
      // Random inputs have no near-ties at this scale; a mismatch is a kernel bug.
      EXPECT_TRUE(at::equal(gpu[p].cpu(), cpu[p])) << policies[p].name << " layer " << layer;
    }
  }
}

}  // namespace
