#include "evict/score.h"

#include <ATen/ATen.h>

#include "evict/window_params.h"

namespace kvs::evict {

at::Tensor base_scores(const WindowStats& stats, const Params& params, double lambda1) {
  const WindowParams& w = window_params();
  at::Tensor score;
  if (params.get(w.mean)) score = stats.mu;
  if (params.get(w.dispersion) && lambda1 != 0.0) {
    // Skipped at lambda1 = 0, so that the score is then exactly the baselines' mu.
    score = score.defined() ? score + lambda1 * stats.sigma : lambda1 * stats.sigma;
  }
  if (!score.defined()) score = at::zeros_like(stats.mu);  // dispersion only, at lambda1 = 0

  if (params.get(w.granularity) == "kv_head") {
    const int64_t group = stats.heads() / stats.kv_heads;
    const at::Tensor grouped = score.view({stats.kv_heads, group, stats.scorable()});
    score = params.get(w.group_reduce) == "max" ? grouped.amax(1) : grouped.mean(1);
  }

  const int64_t k = params.get(w.kernel);
  const std::string& pooling = params.get(w.pooling);
  if (pooling == "none" || k == 1) return score.contiguous();
  const at::Tensor batched = score.unsqueeze(0);  // [1, rows, tokens]: rows are channels
  const at::Tensor pooled = pooling == "max"
                                ? at::max_pool1d(batched, {k}, {1}, {k / 2})
                                : at::avg_pool1d(batched, {k}, {1}, {k / 2}, false, true);
  return pooled.squeeze(0).contiguous();
}

}  // namespace kvs::evict
