// The CUDA kernels of the eviction module, on ATen tensors (no CUDA types in this header). The
// evict module calls them when its tensors are on a CUDA device; the CPU implementations in
// src/evict are the reference they are tested against (tests/evict/test_kernels_gpu.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <utility>

namespace kvs::kernels {

// window_queries [heads, W, dim], keys [kv_heads, n, dim] on one CUDA device, any float dtype
// -> {mu, sigma}, each [heads, n - W] float32 (see evict/window_stats.h).
std::pair<at::Tensor, at::Tensor> window_stats_cuda(const at::Tensor& window_queries,
                                                    const at::Tensor& keys);

// The batched greedy admission (see evict::admit_greedy, same arguments and result).
at::Tensor greedy_admit_cuda(const at::Tensor& unit_keys, const at::Tensor& scores,
                             const at::Tensor& candidates, const at::Tensor& counts,
                             const at::Tensor& lambda2);

// Waits for all work queued on the current CUDA device (for timings).
void synchronize_cuda();

}  // namespace kvs::kernels
