// The transformer's functional building blocks of inference (transformer.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include "model/weights.h"

namespace kvs::model {

// RMSNorm as the reference computes it: in float32, cast back, then times the weight.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

// x @ weight^T, as at::linear. On the CPU without autograd, a product of a few rows (decode) is
// split by weight rows over the intra-op threads, each running row_product (float32 with AVX2)
// or else a single-threaded BLAS product on its rows: the BLAS alone runs a matrix-vector
// product on one thread at a third of the read bandwidth. The split needs layers.cpp built with
// OpenMP (src/model/CMakeLists.txt); without it the product runs serially. Where the weight's
// stored GGUF blocks are given, row_product's path streams those instead (block_row_product: the
// same values, a fraction of the bytes).
at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const StoredBlocks& blocks = {});

// A q, k or v projection split into heads: x @ weight^T (+ bias: qwen2), viewed [..., heads,
// head_dim], each head RMS-normalised by `norm` where it is defined (qwen3's q_norm / k_norm,
// which come before RoPE). Not transposed.
at::Tensor project_heads(const at::Tensor& x, const at::Tensor& weight, const StoredBlocks& blocks,
                         const at::Tensor& bias, const at::Tensor& norm, int64_t heads, double eps);

// down(silu(gate(x)) * up(x)).
at::Tensor swiglu_mlp(const at::Tensor& x, const LayerWeights& w);

}  // namespace kvs::model
