#include "evict/score.h"

#include <ATen/ATen.h>

namespace kvs::evict {

int64_t cache_heads(const Policy& policy, int64_t heads, int64_t kv_heads) {
  return policy.granularity == Granularity::KvHead ? kv_heads : heads;
}

at::Tensor base_scores(const WindowStats& stats, const Policy& policy, double lambda1) {
  at::Tensor score;
  if (policy.terms.mean) score = stats.mu;
  if (policy.terms.dispersion && lambda1 != 0.0) {
    // Skipped at lambda1 = 0, so that the score is then exactly the baselines' mu.
    score = score.defined() ? score + lambda1 * stats.sigma : lambda1 * stats.sigma;
  }
  if (!score.defined()) score = at::zeros_like(stats.mu);  // dispersion only, at lambda1 = 0

  if (policy.granularity == Granularity::KvHead) {
    const int64_t group = stats.heads() / stats.kv_heads;
    const at::Tensor grouped = score.view({stats.kv_heads, group, stats.scorable()});
    score = policy.group_reduce == GroupReduce::Max ? grouped.amax(1) : grouped.mean(1);
  }

  const int64_t k = policy.kernel;
  if (policy.pooling == Pooling::None || k == 1) return score.contiguous();
  const at::Tensor batched = score.unsqueeze(0);  // [1, rows, tokens]: rows are channels
  const at::Tensor pooled = policy.pooling == Pooling::Max
                                ? at::max_pool1d(batched, {k}, {1}, {k / 2})
                                : at::avg_pool1d(batched, {k}, {1}, {k / 2}, false, true);
  return pooled.squeeze(0).contiguous();
}

}  // namespace kvs::evict
