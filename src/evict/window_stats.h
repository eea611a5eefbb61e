// Window statistics of one layer (docs/reference.md §1-2): the fp32 softmax of the last W prompt
// queries over all n prompt keys (post-RoPE, scaled by 1/sqrt(head_dim), causal inside the W x W
// window block only), then per query head and token i in [0, n - W):
//   mu_i    = mean over the W window queries of A[q, i]
//   sigma_i = sample standard deviation (divisor W - 1) of the same W values
// The window columns themselves are dropped: the window is always kept. Computed once per layer
// and shared by every policy of a batch. CUDA tensors run the kernel in src/cuda/ when it is built.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kvs::evict {

struct WindowStats {
  at::Tensor mu;     // [heads, n - W] float32
  at::Tensor sigma;  // [heads, n - W] float32
  int64_t kv_heads = 0;
  int64_t prompt_length = 0;  // n
  int64_t window = 0;         // W

  int64_t heads() const { return mu.size(0); }
  int64_t scorable() const { return prompt_length - window; }  // n - W
};

// window_queries [heads, W, head_dim], keys [kv_heads, n, head_dim], any floating dtype, same
// device; heads a multiple of kv_heads (query head h reads KV head h / (heads / kv_heads)); n > W.
// Shape errors are kvs::Error naming the tensor. CPU tensors run the AVX-512 kernel
// (window_stats_avx512.h) where the CPU has it, else compute_window_stats_aten_cpu.
WindowStats compute_window_stats(const at::Tensor& window_queries, const at::Tensor& keys);

// The plain-ATen implementation: the reference of the CPU and CUDA kernels.
WindowStats compute_window_stats_reference(const at::Tensor& window_queries,
                                           const at::Tensor& keys);

// The CPU path without AVX-512: the reference's operations fused per KV head, its floats bit for
// bit. CPU tensors only.
WindowStats compute_window_stats_aten_cpu(const at::Tensor& window_queries, const at::Tensor& keys);

}  // namespace kvs::evict
