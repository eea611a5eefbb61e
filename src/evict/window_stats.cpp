#include "evict/window_stats.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "core/error.h"
#include "core/log.h"
#include "evict/tensor_checks.h"

#ifdef KVS_WITH_KERNELS
#include "kernels/evict_kernels.h"
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

}  // namespace

WindowStats compute_window_stats_reference(const at::Tensor& window_queries,
                                           const at::Tensor& keys) {
  check_inputs(window_queries, keys);
  const int64_t heads = window_queries.size(0), window = window_queries.size(1);
  const int64_t dim = window_queries.size(2);
  const int64_t kv_heads = keys.size(0), n = keys.size(1), group = heads / kv_heads;
  const int64_t scorable = n - window;

  // One product per KV head for its whole group of query heads: K is never repeated. The
  // 1/sqrt(head_dim) scale goes on the few query rows rather than on the [W, n] logits.
  const at::Tensor q = (window_queries.to(at::kFloat) / std::sqrt(static_cast<double>(dim)))
                           .reshape({kv_heads, group * window, dim});
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
  // Mean and sample std over the W window rows, two passes in float like the CUDA kernel, each
  // a contiguous sweep over the tokens (ATen's strided reduction over W = 8 is slow here).
  stats.mu = at::empty({heads, scorable}, at::kFloat);
  stats.sigma = at::empty({heads, scorable}, at::kFloat);
  const float* a = attention.data_ptr<float>();
  float* mu = stats.mu.data_ptr<float>();
  float* sigma = stats.sigma.data_ptr<float>();
  const float inv_window = 1.0f / static_cast<float>(window);
  const float inv_dof = 1.0f / static_cast<float>(window - 1);
  at::parallel_for(0, heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t h = begin; h < end; ++h) {
      float* m = mu + h * scorable;
      float* s = sigma + h * scorable;
      std::fill(m, m + scorable, 0.0f);
      std::fill(s, s + scorable, 0.0f);
      for (int64_t w = 0; w < window; ++w) {
        const float* row = a + (h * window + w) * n;
        for (int64_t j = 0; j < scorable; ++j) m[j] += row[j];
      }
      for (int64_t j = 0; j < scorable; ++j) m[j] *= inv_window;
      for (int64_t w = 0; w < window; ++w) {
        const float* row = a + (h * window + w) * n;
        for (int64_t j = 0; j < scorable; ++j) s[j] += (row[j] - m[j]) * (row[j] - m[j]);
      }
      for (int64_t j = 0; j < scorable; ++j) s[j] = std::sqrt(s[j] * inv_dof);
    }
  });
  return stats;
}

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
  return compute_window_stats_reference(window_queries, keys);
}

}  // namespace kvs::evict
