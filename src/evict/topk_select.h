// Top-k selection of the baselines, with a deterministic ranking (torch.topk leaves ties
// unspecified): a higher score ranks first; equal scores rank by LOWER position first (-0 equals
// +0; NaN ranks above every number, as torch's sort has it). The greedy
// selector ranks its candidates by the same rule, which is what makes lambda1 = lambda2 = 0 select
// exactly the baseline's tokens.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kvs::evict {

// scores [rows, m] float32 (CPU or CUDA). The `count` best positions of each row in rank order
// (best first): [rows, count] int64, count <= m.
at::Tensor rank_top(const at::Tensor& scores, int64_t count);

// The same set per row in ascending position order: what a baseline keeps (before the window).
at::Tensor select_topk(const at::Tensor& scores, int64_t count);

// The CPU work of rank_top on one row: scores[0, m) -> out[0, count) in rank order.
void rank_top_row(const float* scores, int64_t m, int64_t count, int64_t* out);

}  // namespace kvs::evict
