// Rotary position embeddings, half-split convention (element j pairs with j + head_dim/2), with
// frequencies and tables computed in float32 as the reference does; llama3 frequency scaling.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "model/config.h"

namespace kvs::model {

// [head_dim / 2] float32 inverse frequencies, llama3 scaling applied when configured.
at::Tensor rope_inverse_frequencies(const ModelConfig& config);

struct RopeTables {
  at::Tensor cos;  // [count, head_dim] in the run dtype
  at::Tensor sin;
};

// Tables for positions start .. start + count - 1.
RopeTables rope_tables(const at::Tensor& inv_freq, int64_t start, int64_t count,
                       at::ScalarType dtype, at::Device device);

// Per row r, tables for positions starts[r] .. starts[r] + count - 1: [rows, 1, count, head_dim],
// which rotate x [rows, heads, count, head_dim] row by row.
RopeTables rope_tables_rows(const at::Tensor& inv_freq, const std::vector<int64_t>& starts,
                            int64_t count, at::ScalarType dtype, at::Device device);

// Tables for arbitrary positions [..., count] (int64): [..., count, head_dim]. RoPE composes, so
// rotating keys written at position p by the tables of delta moves them to position p + delta.
RopeTables rope_tables_at(const at::Tensor& inv_freq, const at::Tensor& positions,
                          at::ScalarType dtype, at::Device device);

// x [..., count, head_dim] -> x * cos + rotate_half(x) * sin. Float32 CPU tensors without
// autograd come back contiguous.
at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables);

}  // namespace kvs::model
