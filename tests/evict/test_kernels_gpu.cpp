// The CUDA kernels against their CPU references. Skips cleanly without a GPU.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "evict/greedy_select.h"
#include "evict/layer_selection.h"
#include "evict/method.h"
#include "evict/policy.h"
#include "evict/window_stats.h"
#include "model/attention.h"

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

// Every registered method scores a layer on the GPU as on the CPU (ATen operations on the cache's
// device), with every prefill signal given; the attention column sums too.
TEST(KernelsGpu, EveryMethodScoresAsOnTheCpu) {
  REQUIRE_GPU();
  at::manual_seed(23);
  const int64_t heads = 8, kv_heads = 2, n = 700, d = 64, window = 64;
  const at::Tensor q = at::randn({heads, n, d}) * 0.5, k = at::randn({kv_heads, n, d}) * 0.5;
  const at::Tensor v = at::randn({kv_heads, n, d}), pre = at::randn({heads, n, d});
  const at::Tensor o_proj = at::randn({heads * d, heads * d}) / 16.0;
  const at::Tensor inv_freq = at::pow(1e4, -at::arange(0, d, 2, at::kFloat) / double(d));
  const at::Tensor sums = kvs::model::prefill_attention_column_sums(q, k, {});
  const at::Tensor sums_gpu = kvs::model::prefill_attention_column_sums(q.cuda(), k.cuda(), {});
  EXPECT_TRUE(at::allclose(sums_gpu.cpu(), sums, 1e-4, 1e-5));
  const at::Tensor rows = q.narrow(1, n - window, window);
  const auto layer_on = [&](const at::Device& device, const at::Tensor& keys,
                            const at::Tensor& values, const at::Tensor& queries) {
    kvs::model::PrefillLayer layer(3, keys, values, queries);
    layer.column_sums = sums.to(device);
    layer.pre_rope_queries = pre.to(device);
    layer.rope_inv_freq = inv_freq.to(device);
    layer.output_projection = o_proj.to(device);
    return layer;
  };
  const at::Tensor kg = k.cuda(), vg = v.cuda(), rg = rows.cuda();
  const kvs::model::PrefillLayer cpu_layer = layer_on(at::kCPU, k, v, rows);
  const kvs::model::PrefillLayer gpu_layer = layer_on(at::kCUDA, kg, vg, rg);
  for (const kvs::evict::Method* m : kvs::evict::registered_methods()) {
    const kvs::evict::Policy policy = kvs::evict::policy_from_json(
        kvs::evict::default_policy_json(m->info(), 128), m->info().name);
    const at::Tensor cpu = kvs::evict::method_scores(policy, cpu_layer, 32);
    const at::Tensor gpu = kvs::evict::method_scores(policy, gpu_layer, 32).cpu();
    ASSERT_EQ(cpu.sizes(), gpu.sizes()) << m->info().name;
    const at::Tensor finite = at::isfinite(cpu);
    EXPECT_TRUE(at::equal(finite, at::isfinite(gpu))) << m->info().name;
    const double scale = cpu.masked_select(finite).abs().max().item<double>();
    EXPECT_LE((cpu - gpu).masked_select(finite).abs().max().item<double>(), 1e-4 * scale)
        << m->info().name;
    EXPECT_TRUE(at::equal(kvs::evict::select_layer(cpu_layer, {policy}, 32).front(),
                          kvs::evict::select_layer(gpu_layer, {policy}, 32).front().cpu()))
        << m->info().name << ": kept sets (ties aside, random scores have none)";
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
