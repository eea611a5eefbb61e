// Attention kernels of the runner: causal prefill over a whole prompt (SDPA where LibTorch >= 2
// has it, else blocks of query rows; never an n x n matrix for the whole prompt) and decode
// attention over a DecodeCache layer.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "model/kv_cache.h"

namespace kvs::model {

enum class AttentionBackend {
  Auto,     // where no sliding window cuts the prompt: Fused where it runs, else SDPA where
            // available; else Blocked
  Blocked,  // query blocks of block_size rows, fp32 softmax (works with every LibTorch)
  Sdpa,     // at::scaled_dot_product_attention (LibTorch >= 2.0)
  Fused,    // flash_attention.h's float32 CPU kernel (AVX-512, head_dim a multiple of 64)
};

struct PrefillAttentionOptions {
  AttentionBackend backend = AttentionBackend::Auto;
  int64_t block_size = 1024;
  std::optional<int64_t> sliding_window;
};

bool sdpa_available();

// q [heads, n, d], k/v [kv_heads, n, d] (post-RoPE) -> [heads, n, d]; query i sees keys j <= i
// (and j > i - window with a sliding window). Query head h reads KV head h / (heads / kv_heads).
// With `row_lse`, the fused backend writes each query row's log-sum-exp of its scaled scores
// there ([heads, n]; left undefined by the other backends): what prefill_attention_column_sums
// needs to skip its own softmax.
at::Tensor prefill_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const PrefillAttentionOptions& options, at::Tensor* row_lse = nullptr);

// Every query's attention summed per key: out[h, i] = sum over queries t >= i of softmax(q_t K^T /
// sqrt(d))[i], [heads, n] float32 (within the sliding window where one cuts the prompt). Given
// the fused prefill's row_lse: one fused sweep over the keys (exp(s - lse) per column); without
// it, one more Q K^T sweep in blocks of query rows (prefill_block_rows). Never an n x n matrix.
at::Tensor prefill_attention_column_sums(const at::Tensor& q, const at::Tensor& k,
                                         const PrefillAttentionOptions& options,
                                         const at::Tensor& row_lse = {});

// q [batch, heads, t, d] for the last t slots of `layer` (already appended) -> [batch, heads, t, d].
// The t new tokens attend causally among themselves and to every earlier slot of their row
// except left padding. A sliding window is measured in slots, so the caller passes one only for
// caches whose slot index is the token position (plain, uncompressed caches).
at::Tensor cached_attention(const at::Tensor& q, const LayerCache& layer,
                            std::optional<int64_t> sliding_window);

}  // namespace kvs::model
