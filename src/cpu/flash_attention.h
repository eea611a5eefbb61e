// Causal prefill attention in float32 on AVX-512 CPUs, fused per block of 64 queries and 64 keys:
// scores, online softmax and weighted values stay in the first-level cache (no n x n matrix, no
// BLAS call per block, the keys transposed once per tile). Equal to LibTorch's SDPA up to float
// rounding (its own summation order and exp), and closer than it to a float64 reference.
// Torch-free.
#pragma once

#include <cstdint>

namespace kvs::cpu {

// Whether causal_attention runs here: an x86-64 CPU with AVX-512F, and head_dim a multiple of 64.
bool causal_attention_available(int64_t head_dim);

// q [heads, n, d], k and v [kv_heads, n, d], all contiguous; query head h reads KV head
// h / (heads / kv_heads). out [heads, n, d] = softmax(q k^T / sqrt(d), causal) v, query i seeing
// keys j <= i. Spread over LibTorch's intra-op threads.
// With row_lse [heads, n]: each query row's log-sum-exp of its scaled scores q k^T / sqrt(d).
void causal_attention(const float* q, const float* k, const float* v, int64_t heads,
                      int64_t kv_heads, int64_t n, int64_t d, float* out, float* row_lse = nullptr);

// Every query's attention weights summed per key (observed attention): sums [heads, n],
// sums[h, j] = sum over i >= j of softmax_i[j], from the rows' log-sum-exp that causal_attention
// wrote: one more sweep over the keys, exp(s - lse) added per column; O(n) memory, no n x n
// matrix. Same scores as causal_attention's (same scaled queries, same kernel).
void causal_attention_column_sums(const float* q, const float* k, const float* row_lse,
                                  int64_t heads, int64_t kv_heads, int64_t n, int64_t d,
                                  float* sums);

}  // namespace kvs::cpu
