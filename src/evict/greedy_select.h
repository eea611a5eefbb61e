// The diversity-aware greedy admission (MMR) of docs/reference.md §1, per row of scores:
//   candidates  C = the top min(m, candidate_factor * count) tokens (rank rule of topk_select.h)
//   s~_i        = s_i / max(max_j s_j, 1e-12)      (max over all m tokens: the best candidate)
//   corr(i, S)  = max(0, max over j in S of cos(k_i, k_j)) on the post-RoPE keys; corr(i, {}) = 0
//   repeat count times: admit argmax over i in C \ S of  s~_i + lambda2 * corr(i, S)
// Ties of the objective go to the candidate ranked first (larger score, then lower position), so
// lambda2 = 0 admits exactly the top-k set. Cost O(count * |C| * head_dim) per row: the cosines
// are computed incrementally against each newly admitted key; no [n, n] or [|C|, |C|] matrix.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kvs::evict {

// scores [rows, m] float32; keys [kv_heads, n, head_dim] (n >= m, any float dtype), row r reads
// KV head r / (rows / kv_heads). Returns [rows, count] int64 positions, ascending.
at::Tensor select_greedy(const at::Tensor& scores, const at::Tensor& keys, int64_t count,
                         double lambda2, int64_t candidate_factor);

// The admission loop on prepared candidates, row by row (rows may differ, e.g. several layers or
// policies in one call; padding beyond a row's counts is ignored):
//   unit_keys [rows, C, d] float32  candidate keys, L2-normalised, in rank order
//   scores    [rows, C] float32     s~ of the candidates
//   candidates, counts [rows] int64; lambda2 [rows] float32
// Returns [rows, max(counts)] int64: candidate indices in admission order, padded with -1.
// CUDA tensors run the kernel of src/cuda/greedy_select.cu; this CPU loop is its reference.
at::Tensor admit_greedy(const at::Tensor& unit_keys, const at::Tensor& scores,
                        const at::Tensor& candidates, const at::Tensor& counts,
                        const at::Tensor& lambda2);

}  // namespace kvs::evict
