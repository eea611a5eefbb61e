// The base score of a window-statistics policy on one layer (docs/reference.md §1-2):
//   s_i = [mean] mu_i + [dispersion] lambda1 * sigma_i      per query head,
// reduced over each query-head group (mean or max) for kv_head granularity, then pooled along the
// tokens with the policy's kernel and stride 1 (max: -inf padding; avg: zero padding counted, as
// the reference's avg_pool1d). The combined score is pooled (our choice). The reference ranks by
// the SUM over window queries; we use the mean, which ranks identically (up to float rounding).
#pragma once

#include <ATen/core/Tensor.h>

#include "evict/params.h"
#include "evict/window_stats.h"

namespace kvs::evict {

// [cache_heads, n - W] float32, on the statistics' device: the parameters are window_params()'.
at::Tensor base_scores(const WindowStats& stats, const Params& params, double lambda1);

}  // namespace kvs::evict
