#include "evict/window_stats.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/std_mean.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "core/error.h"
#include "core/log.h"
#include "cpu/window_stats_avx512.h"
#include "evict/tensor_checks.h"

#ifdef KVS_WITH_KERNELS
#include "cuda/evict_kernels.h"
#endif

namespace kvs::evict {

namespace {

void check_inputs(const at::Tensor& window_queries, const at::Tensor& keys) {
  check_float_tensor(window_queries, "window_queries", 3, "[heads, W, head_dim]");
  check_float_tensor(keys, "keys", 3, "[kv_heads, n, head_dim]");
  const int64_t heads = window_queries.size(0), window = window_queries.size(1);
  const int64_t kv_heads = keys.size(0), n = keys.size(1);
  if (window_queries.size(2) != keys.size(2)) {
    throw error_at("window_queries",
                   strfmt("head_dim %lld differs from the keys' %lld",
                          (long long)window_queries.size(2), (long long)keys.size(2)));
  }
  if (kv_heads == 0 || heads % kv_heads != 0) {
    throw error_at("window_queries",
                   strfmt("%lld query heads are not a multiple of the keys' %lld KV heads",
                          (long long)heads, (long long)kv_heads));
  }
  if (window < 1 || n <= window) {
    throw error_at("keys", strfmt("%lld prompt tokens leave none outside the window of %lld",
                                  (long long)n, (long long)window));
  }
  if (window_queries.device() != keys.device()) {
    throw error_at("window_queries", "is on " + window_queries.device().str() + ", the keys on " +
                                         keys.device().str());
  }
}

// Mean and sample std over the W rows (n floats apart) of one head's attention, for the first
// `scorable` tokens: two passes in float like the CUDA kernel, each a contiguous sweep over the
// tokens (ATen's strided reduction over W = 8 is slow here).
void mean_and_deviation(const float* attention, int64_t window, int64_t n, int64_t scorable,
                        float* mu, float* sigma) {
  const float inv_window = 1.0f / static_cast<float>(window);
  const float inv_dof = 1.0f / static_cast<float>(window - 1);
  std::fill(mu, mu + scorable, 0.0f);
  std::fill(sigma, sigma + scorable, 0.0f);
  for (int64_t w = 0; w < window; ++w) {
    const float* row = attention + w * n;
    for (int64_t j = 0; j < scorable; ++j) mu[j] += row[j];
  }
  for (int64_t j = 0; j < scorable; ++j) mu[j] *= inv_window;
  for (int64_t w = 0; w < window; ++w) {
    const float* row = attention + w * n;
    for (int64_t j = 0; j < scorable; ++j) sigma[j] += (row[j] - mu[j]) * (row[j] - mu[j]);
  }
  for (int64_t j = 0; j < scorable; ++j) sigma[j] = std::sqrt(sigma[j] * inv_dof);
}

// The window queries in float32 over sqrt(head_dim), as every path scales them: the scale goes
// on the few query rows rather than on the [W, n] logits.
at::Tensor scaled_queries(const at::Tensor& window_queries) {
  return window_queries.to(at::kFloat) / std::sqrt(static_cast<double>(window_queries.size(2)));
}

}  // namespace

WindowStats compute_window_stats_reference(const at::Tensor& window_queries,
                                           const at::Tensor& keys) {
  check_inputs(window_queries, keys);
  const int64_t heads = window_queries.size(0), window = window_queries.size(1);
  const int64_t dim = window_queries.size(2);
  const int64_t kv_heads = keys.size(0), n = keys.size(1), group = heads / kv_heads;
  const int64_t scorable = n - window;

  // One product per KV head for its whole group of query heads: K is never repeated.
  const at::Tensor q = scaled_queries(window_queries).reshape({kv_heads, group * window, dim});
  at::Tensor logits = at::bmm(q, keys.to(at::kFloat).transpose(1, 2)).view({heads, window, n});
  // Window query w sits at position n - W + w: it must not see the window keys after it.
  const at::Tensor future =
      at::ones({window, window}, at::TensorOptions().dtype(at::kBool).device(keys.device()))
          .triu(1);
  logits.narrow(2, scorable, window).masked_fill_(future, -std::numeric_limits<float>::infinity());
  const at::Tensor attention = at::softmax(logits, 2);  // fp32, over all n keys

  WindowStats stats;
  stats.kv_heads = kv_heads;
  stats.prompt_length = n;
  stats.window = window;
  if (!attention.is_cpu()) {  // device tensors without the kernels: plain ATen
    auto [sigma, mu] = at::std_mean(attention.narrow(2, 0, scorable), {1}, at::Scalar(1), false);
    stats.mu = mu.contiguous();
    stats.sigma = sigma.contiguous();
    return stats;
  }
  stats.mu = at::empty({heads, scorable}, at::kFloat);
  stats.sigma = at::empty({heads, scorable}, at::kFloat);
  const float* a = attention.data_ptr<float>();
  for (int64_t h = 0; h < heads; ++h) {
    mean_and_deviation(a + h * window * n, window, n, scorable,
                       stats.mu.data_ptr<float>() + h * scorable,
                       stats.sigma.data_ptr<float>() + h * scorable);
  }
  return stats;
}

// The reference's operations in the same order, one KV head per task: its group's [group * W, n]
// logits in one product, masked, softmaxed and reduced to mu and sigma while that block (2 MB at
// n = 15.6k, group 4, W = 8) is still in cache, instead of three sweeps over all heads' logits in
// memory.
WindowStats compute_window_stats_aten_cpu(const at::Tensor& window_queries,
                                          const at::Tensor& keys) {
  check_inputs(window_queries, keys);
  if (!keys.is_cpu()) throw error_at("keys", "are on " + keys.device().str() + ", not the CPU");
  const int64_t heads = window_queries.size(0), window = window_queries.size(1);
  const int64_t dim = window_queries.size(2);
  const int64_t kv_heads = keys.size(0), n = keys.size(1), group = heads / kv_heads;
  const int64_t scorable = n - window;
  const at::Tensor q =
      scaled_queries(window_queries).reshape({kv_heads, group * window, dim}).contiguous();
  const at::Tensor k = keys.to(at::kFloat).contiguous();
  const at::Tensor future = at::ones({window, window}, at::kBool).triu(1);

  WindowStats stats;
  stats.kv_heads = kv_heads;
  stats.prompt_length = n;
  stats.window = window;
  stats.mu = at::empty({heads, scorable}, at::kFloat);
  stats.sigma = at::empty({heads, scorable}, at::kFloat);
  float* mu = stats.mu.data_ptr<float>();
  float* sigma = stats.sigma.data_ptr<float>();
  const bool inference = c10::InferenceMode::is_enabled();
  at::parallel_for(0, kv_heads, 1, [&](int64_t begin, int64_t end) {
    c10::InferenceMode guard(inference);  // per thread; the pool's threads take the caller's
    at::Tensor logits = at::empty({group * window, n}, at::kFloat);
    at::Tensor attention = at::empty_like(logits);
    for (int64_t g = begin; g < end; ++g) {
      at::mm_out(logits, q[g], k[g].t());
      logits.view({group, window, n})
          .narrow(2, scorable, window)
          .masked_fill_(future, -std::numeric_limits<float>::infinity());
      at::_softmax_out(attention, logits, 1, false);
      const float* a = attention.data_ptr<float>();
      for (int64_t member = 0; member < group; ++member) {
        const int64_t h = g * group + member;
        mean_and_deviation(a + member * window * n, window, n, scorable, mu + h * scorable,
                           sigma + h * scorable);
      }
    }
  });
  return stats;
}

namespace {

WindowStats window_stats_avx512_cpu(const at::Tensor& window_queries, const at::Tensor& keys) {
  check_inputs(window_queries, keys);
  const int64_t heads = window_queries.size(0), window = window_queries.size(1);
  const int64_t dim = window_queries.size(2);
  const int64_t kv_heads = keys.size(0), n = keys.size(1);
  // The reference's scaled queries, so the kernel's scores differ from its only in summation.
  const at::Tensor q = scaled_queries(window_queries).contiguous();
  const at::Tensor k = keys.to(at::kFloat).contiguous();
  WindowStats stats;
  stats.kv_heads = kv_heads;
  stats.prompt_length = n;
  stats.window = window;
  stats.mu = at::empty({heads, n - window}, at::kFloat);
  stats.sigma = at::empty({heads, n - window}, at::kFloat);
  cpu::window_stats_avx512(q.data_ptr<float>(), k.data_ptr<float>(), kv_heads, heads / kv_heads,
                           window, n, dim, stats.mu.data_ptr<float>(),
                           stats.sigma.data_ptr<float>());
  return stats;
}

}  // namespace

WindowStats compute_window_stats(const at::Tensor& window_queries, const at::Tensor& keys) {
#ifdef KVS_WITH_KERNELS
  if (keys.is_cuda()) {
    check_inputs(window_queries, keys);
    WindowStats stats;
    std::tie(stats.mu, stats.sigma) = kernels::window_stats_cuda(window_queries, keys);
    stats.kv_heads = keys.size(0);
    stats.prompt_length = keys.size(1);
    stats.window = window_queries.size(1);
    return stats;
  }
#endif
  if (keys.is_cpu()) {
    return cpu::window_stats_avx512_available()
               ? window_stats_avx512_cpu(window_queries, keys)
               : compute_window_stats_aten_cpu(window_queries, keys);
  }
  return compute_window_stats_reference(window_queries, keys);
}

}  // namespace kvs::evict
