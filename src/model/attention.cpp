#include "model/attention.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <c10/core/GradMode.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "cpu/flash_attention.h"
#include "cpu/parallel_tasks.h"
#include "cpu/row_product.h"
#include "model/prefill_blocks.h"

#if TORCH_VERSION_MAJOR >= 2
#define KVS_HAVE_SDPA 1
#else
#define KVS_HAVE_SDPA 0
#endif

namespace kvs::model {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Additive float mask [rows, keys]: query row r at position first_query + r sees key j (at position
// first_key + j) when j <= position and, with a window, position - j < window.
at::Tensor causal_mask(int64_t first_query, int64_t rows, int64_t first_key, int64_t keys,
                       std::optional<int64_t> window, at::Device device) {
  const auto opts = at::TensorOptions().dtype(at::kLong).device(device);
  const at::Tensor qpos = at::arange(first_query, first_query + rows, opts).unsqueeze(1);
  const at::Tensor kpos = at::arange(first_key, first_key + keys, opts).unsqueeze(0);
  at::Tensor visible = kpos <= qpos;
  if (window) visible = visible.logical_and(qpos - kpos < *window);
  return at::zeros({rows, keys}, at::TensorOptions().dtype(at::kFloat).device(device))
      .masked_fill(visible.logical_not(), kNegInf);
}

// The causal softmax of q [heads, n, d] against k [kv_heads, n, d] (post-RoPE), in blocks of
// query rows sized by prefill_block_rows: fn(q0, rows, k0, keys, probs) gets each block's float32
// probabilities [kv_heads, group, rows, keys] of query rows q0.. against keys k0.. (GQA without
// repeating K), the block's scores already freed.
template <typename Fn>
void for_each_row_block(const at::Tensor& q, const at::Tensor& k, int64_t block_size,
                        std::optional<int64_t> window, Fn&& fn) {
  const int64_t heads = q.size(0), n = q.size(1), d = q.size(2), kv_heads = k.size(0);
  const int64_t group = heads / kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const at::Tensor grouped_q = q.view({kv_heads, group, n, d});
  for (int64_t q0 = 0; q0 < n;) {
    const int64_t most_keys =
        window ? std::min(n, *window + block_size) : std::min(n, q0 + block_size);
    const int64_t rows = std::min(prefill_block_rows(heads, most_keys, block_size), n - q0);
    const int64_t k0 = window ? std::max<int64_t>(0, q0 - *window + 1) : 0;
    const int64_t keys = q0 + rows - k0;
    at::Tensor probs;
    {
      // [kv_heads, group * rows, d] x [kv_heads, d, keys]
      const at::Tensor qb = grouped_q.narrow(2, q0, rows).reshape({kv_heads, group * rows, d});
      at::Tensor scores = at::bmm(qb, k.narrow(1, k0, keys).transpose(1, 2)).to(at::kFloat);
      scores.mul_(scale);
      scores = scores.view({kv_heads, group, rows, keys});
      scores.add_(causal_mask(q0, rows, k0, keys, window, q.device()));
      probs = at::softmax(scores, -1);
    }
    fn(q0, rows, k0, keys, probs);
    q0 += rows;
  }
}

at::Tensor blocked_prefill(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           int64_t block_size, std::optional<int64_t> window) {
  const int64_t heads = q.size(0), d = q.size(2), kv_heads = k.size(0);
  at::Tensor out = at::empty_like(q);
  for_each_row_block(q, k, block_size, window,
                     [&](int64_t q0, int64_t rows, int64_t k0, int64_t keys, const at::Tensor& p) {
                       const at::Tensor probs = p.to(v.scalar_type()).view({kv_heads, -1, keys});
                       const at::Tensor ob = at::bmm(probs, v.narrow(1, k0, keys));
                       out.narrow(1, q0, rows).copy_(ob.view({heads, rows, d}));
                     });
  return out;
}

#if KVS_HAVE_SDPA
at::Tensor sdpa_prefill(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const int64_t group = q.size(0) / k.size(0);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
  return at::scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), {}, 0.0,
                                          /*is_causal=*/true, std::nullopt,
                                          /*enable_gqa=*/group > 1)
      .squeeze(0);
#else
  const at::Tensor kr = group > 1 ? k.repeat_interleave(group, 0) : k;
  const at::Tensor vr = group > 1 ? v.repeat_interleave(group, 0) : v;
  return at::scaled_dot_product_attention(q.unsqueeze(0), kr.unsqueeze(0), vr.unsqueeze(0), {}, 0.0,
                                          /*is_causal=*/true)
      .squeeze(0);
#endif
}
#endif

// Cached keys per task of the decode kernels: a few tasks per head on every thread.
constexpr int64_t kKeyBlock = 256;

// The float32 CPU decode kernels (row_product.h) take contiguous caches whose head_dim is whole
// blocks of their columns; anything else (other dtypes, devices, autograd) goes through ATen.
bool float_cpu_kernels_apply(const at::Tensor& q, const LayerCache& layer) {
  return q.device().is_cpu() && q.scalar_type() == at::kFloat &&
         layer.keys.scalar_type() == at::kFloat && layer.values.scalar_type() == at::kFloat &&
         layer.keys.is_contiguous() && layer.values.is_contiguous() &&
         q.size(3) % cpu::kCombineColumns == 0 && !c10::GradMode::is_enabled() &&
         cpu::row_product_available();
}

}  // namespace

bool sdpa_available() { return KVS_HAVE_SDPA != 0; }

int64_t prefill_block_rows(int64_t heads, int64_t keys, int64_t block_size) {
  const int64_t row_bytes = 2 * heads * std::max<int64_t>(1, keys) * int64_t{sizeof(float)};
  return std::max<int64_t>(1, std::min(block_size, kBlockScoreBytes / row_bytes));
}

at::Tensor prefill_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const PrefillAttentionOptions& options, at::Tensor* row_lse) {
  const int64_t n = q.size(1);
  const bool window_cuts = options.sliding_window && *options.sliding_window < n;
  const bool fused_runs = q.device().is_cpu() && q.scalar_type() == at::kFloat &&
                          k.scalar_type() == at::kFloat && v.scalar_type() == at::kFloat &&
                          !c10::GradMode::is_enabled() &&
                          cpu::causal_attention_available(q.size(2));
  AttentionBackend backend = options.backend;
  if (backend == AttentionBackend::Auto && !window_cuts)
    backend = fused_runs         ? AttentionBackend::Fused
              : sdpa_available() ? AttentionBackend::Sdpa
                                 : AttentionBackend::Blocked;
  if (backend == AttentionBackend::Fused) {
    if (window_cuts) throw Error("the fused backend cannot apply a sliding window; use blocked");
    if (!fused_runs)
      throw Error(
          "the fused backend needs float32 CPU tensors, AVX-512F and a head_dim that is "
          "a multiple of 64");
    const at::Tensor qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    at::Tensor out = at::empty_like(qc);
    if (row_lse) *row_lse = at::empty({q.size(0), n}, qc.options());
    cpu::causal_attention(qc.data_ptr<float>(), kc.data_ptr<float>(), vc.data_ptr<float>(),
                          q.size(0), k.size(0), n, q.size(2), out.data_ptr<float>(),
                          row_lse ? row_lse->data_ptr<float>() : nullptr);
    return out;
  }
  if (backend == AttentionBackend::Sdpa) {
    if (window_cuts) throw Error("the SDPA backend cannot apply a sliding window; use blocked");
#if KVS_HAVE_SDPA
    return sdpa_prefill(q, k, v);
#else
    throw Error("SDPA needs LibTorch >= 2.0; this build has " TORCH_VERSION);
#endif
  }
  return blocked_prefill(q, k, v, std::max<int64_t>(1, options.block_size),
                         window_cuts ? options.sliding_window : std::nullopt);
}

at::Tensor prefill_attention_column_sums(const at::Tensor& q, const at::Tensor& k,
                                         const PrefillAttentionOptions& options,
                                         const at::Tensor& row_lse) {
  const int64_t heads = q.size(0), n = q.size(1), kv_heads = k.size(0);
  if (row_lse.defined()) {  // the fused backend's: its second sweep over the keys
    const at::Tensor qc = q.contiguous(), kc = k.contiguous(), lse = row_lse.contiguous();
    at::Tensor sums = at::empty({heads, n}, qc.options());
    cpu::causal_attention_column_sums(qc.data_ptr<float>(), kc.data_ptr<float>(),
                                      lse.data_ptr<float>(), heads, kv_heads, n, q.size(2),
                                      sums.data_ptr<float>());
    return sums;
  }
  const std::optional<int64_t> window =
      options.sliding_window && *options.sliding_window < n ? options.sliding_window : std::nullopt;
  at::Tensor sums = at::zeros({kv_heads, heads / kv_heads, n}, q.options().dtype(at::kFloat));
  for_each_row_block(q, k, std::max<int64_t>(1, options.block_size), window,
                     [&](int64_t, int64_t, int64_t k0, int64_t keys, const at::Tensor& probs) {
                       sums.narrow(2, k0, keys).add_(probs.sum(2));
                     });
  return sums.view({heads, n});
}

at::Tensor cached_attention(const at::Tensor& q, const LayerCache& layer,
                            std::optional<int64_t> sliding_window) {
  const int64_t batch = q.size(0), heads = q.size(1), t = q.size(2), d = q.size(3);
  const int64_t cache_heads = layer.heads, slots = layer.used;
  const int64_t group = heads / cache_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  // Rows ordered (group member, token): query head h = cache head h / group.
  const at::Tensor qg = q.reshape({batch, cache_heads, group * t, d});
  const bool window_cuts = sliding_window && *sliding_window < slots;
  // New token i sits in slot slots - t + i and sees the slots up to its own.
  const at::Tensor step_mask =
      t > 1 || window_cuts ? causal_mask(slots - t, t, 0, slots,
                                         window_cuts ? sliding_window : std::nullopt, q.device())
                                 .repeat({group, 1})
                           : at::Tensor();
  // Masks the scores in place (left padding, the new tokens' causality and window) and softmaxes.
  auto attend = [&](const at::Tensor& scores) {
    if (layer.prefix_mask.defined()) scores.narrow(-1, 0, layer.prefix_len).add_(layer.prefix_mask);
    if (step_mask.defined()) scores.add_(step_mask);
    return at::softmax(scores, -1).to(layer.values.scalar_type());
  };
  if (float_cpu_kernels_apply(q, layer)) {
    // Scores and weighted values over blocks of cached keys, spread over the intra-op threads:
    // every (row, head) streams its keys and values once, and a few heads still keep every
    // thread busy.
    const int64_t rows = group * t, heads_total = batch * cache_heads;
    const at::Tensor q_scaled = (qg * scale).contiguous();
    at::Tensor scores = at::empty({batch, cache_heads, rows, slots}, q.options());
    const float* qp = q_scaled.data_ptr<float>();
    const float* kp = layer.keys.data_ptr<float>();
    const float* vp = layer.values.data_ptr<float>();
    float* sp = scores.data_ptr<float>();
    const int64_t key_blocks = (slots + kKeyBlock - 1) / kKeyBlock;
    // A (row, head)'s left padding (zero keys and values, masked to -inf) is not read: its scores
    // are the zeros its keys would give, and its weighted values zero. The scores start at the
    // padding rounded down to row_product's four keys, so every key is summed as before.
    const auto padding = [&](int64_t bh) {
      return layer.head_padding.empty() ? int64_t{0} : layer.head_padding[static_cast<size_t>(bh)];
    };
    // The row of keys / values holding a (row, head)'s slot s is base(bh) + s (s >= its padding).
    const auto base = [&](int64_t bh) {
      return layer.segmented() ? layer.segment_base[static_cast<size_t>(bh)] : bh * layer.capacity;
    };
    // Tasks go to the threads as they finish theirs: kept counts differ by policy and by head.
    const auto each_block = [&](const auto& task) {
      cpu::for_each_task(heads_total * key_blocks,
                         [&](int64_t i) { task(i / key_blocks, i % key_blocks * kKeyBlock, i); });
    };
    each_block([&](int64_t bh, int64_t first, int64_t) {
      const int64_t last = std::min(slots, first + kKeyBlock);
      const int64_t pad = padding(bh);
      int64_t start = std::clamp(pad / 4 * 4, first, last);
      float* block_scores = sp + bh * rows * slots;
      const float* head_q = qp + bh * rows * d;
      for (int64_t r = 0; r < rows; ++r)
        std::fill(block_scores + r * slots + first, block_scores + r * slots + start, 0.0f);
      if (layer.segmented() && start < pad && start < last) {
        // The group of four keys that starts in the padding, whose slots the segmented layout
        // does not store: its keys from a scratch with the padding's zeros, so that every key is
        // summed by the same path as in the dense layout.
        const int64_t end = std::min(start + 4, last);
        thread_local std::vector<float> scratch;
        scratch.assign(static_cast<size_t>(4 * d), 0.0f);
        std::copy(kp + (base(bh) + pad) * d, kp + (base(bh) + end) * d,
                  scratch.data() + (pad - start) * d);
        cpu::row_product(head_q, rows, d, scratch.data(), 0, end - start, block_scores + start,
                         slots);
        start = end;
      }
      if (start < last)
        cpu::row_product(head_q, rows, d, kp + (base(bh) + start) * d, 0, last - start,
                         block_scores + start, slots);
    });
    const at::Tensor probs = attend(scores).contiguous();
    // Each task weighs one block of keys' values (read once, in cache for every column block);
    // the blocks' partial sums are added up after. Skipping the padding's terms (zero weights
    // times zero values) leaves every sum as it was.
    at::Tensor partial = at::empty({batch, cache_heads, key_blocks, rows, d}, q.options());
    const float* pp = probs.data_ptr<float>();
    float* part = partial.data_ptr<float>();
    each_block([&](int64_t bh, int64_t first, int64_t i) {
      const int64_t last = std::min(slots, first + kKeyBlock);
      const int64_t start = std::clamp(padding(bh), first, last);
      if (start == last) {
        std::fill(part + i * rows * d, part + (i + 1) * rows * d, 0.0f);
        return;
      }
      cpu::row_combination(pp + bh * rows * slots + start, rows, slots, last - start,
                           vp + (base(bh) + start) * d, d, part + i * rows * d, d);
    });
    const at::Tensor out = key_blocks == 1 ? partial.squeeze(2) : partial.sum(2);
    return out.view({batch, heads, t, d});
  }
  const auto [keys, values] = dense_entries(layer);
  const at::Tensor scores = at::matmul(qg, keys.transpose(2, 3)).to(at::kFloat) * scale;
  return at::matmul(attend(scores), values).view({batch, heads, t, d});
}

}  // namespace kvs::model
