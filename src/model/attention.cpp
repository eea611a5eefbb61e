#include "model/attention.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/zeros.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include <cmath>
#include <limits>

#include "core/error.h"
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

at::Tensor blocked_prefill(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           int64_t block_size, std::optional<int64_t> window) {
  const int64_t heads = q.size(0), n = q.size(1), d = q.size(2), kv_heads = k.size(0);
  const int64_t group = heads / kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  at::Tensor out = at::empty_like(q);
  const at::Tensor grouped_q = q.view({kv_heads, group, n, d});
  for (int64_t q0 = 0; q0 < n;) {
    const int64_t most_keys = window ? std::min(n, *window + block_size) : std::min(n, q0 + block_size);
    const int64_t rows = std::min(prefill_block_rows(heads, most_keys, block_size), n - q0);
    const int64_t k0 = window ? std::max<int64_t>(0, q0 - *window + 1) : 0;
    const int64_t keys = q0 + rows - k0;
    // [kv_heads, group * rows, d] x [kv_heads, d, keys]: GQA without repeating K/V.
    const at::Tensor qb = grouped_q.narrow(2, q0, rows).reshape({kv_heads, group * rows, d});
    at::Tensor scores = at::bmm(qb, k.narrow(1, k0, keys).transpose(1, 2)).to(at::kFloat);
    scores.mul_(scale);
    scores.view({kv_heads, group, rows, keys}).add_(causal_mask(q0, rows, k0, keys, window, q.device()));
    const at::Tensor probs = at::softmax(scores, -1).to(v.scalar_type());
    scores.reset();
    const at::Tensor ob = at::bmm(probs.view({kv_heads, group * rows, keys}), v.narrow(1, k0, keys));
    out.narrow(1, q0, rows).copy_(ob.view({heads, rows, d}));
    q0 += rows;
  }
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
  return at::scaled_dot_product_attention(q.unsqueeze(0), kr.unsqueeze(0), vr.unsqueeze(0), {},
                                          0.0, /*is_causal=*/true)
      .squeeze(0);
#endif
}
#endif

}  // namespace

bool sdpa_available() { return KVS_HAVE_SDPA != 0; }

int64_t prefill_block_rows(int64_t heads, int64_t keys, int64_t block_size) {
  const int64_t row_bytes = 2 * heads * std::max<int64_t>(1, keys) * int64_t{sizeof(float)};
  return std::max<int64_t>(1, std::min(block_size, kBlockScoreBytes / row_bytes));
}

at::Tensor prefill_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const PrefillAttentionOptions& options) {
  const int64_t n = q.size(1);
  const bool window_cuts = options.sliding_window && *options.sliding_window < n;
  AttentionBackend backend = options.backend;
  if (backend == AttentionBackend::Auto)
    backend = sdpa_available() && !window_cuts ? AttentionBackend::Sdpa : AttentionBackend::Blocked;
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

at::Tensor cached_attention(const at::Tensor& q, const LayerCache& layer,
                            std::optional<int64_t> sliding_window) {
  const int64_t batch = q.size(0), heads = q.size(1), t = q.size(2), d = q.size(3);
  const int64_t cache_heads = layer.keys.size(1), slots = layer.used;
  const int64_t group = heads / cache_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const at::Tensor keys = layer.keys.narrow(2, 0, slots);
  const at::Tensor values = layer.values.narrow(2, 0, slots);
  // Rows ordered (group member, token): query head h = cache head h / group.
  const at::Tensor qg = q.reshape({batch, cache_heads, group * t, d});
  const bool window_cuts = sliding_window && *sliding_window < slots;
  // New token i sits in slot slots - t + i and sees the slots up to its own.
  const at::Tensor step_mask =
      t > 1 || window_cuts
          ? causal_mask(slots - t, t, 0, slots, window_cuts ? sliding_window : std::nullopt,
                        q.device())
                .repeat({group, 1})
          : at::Tensor();
  auto attend = [&](const at::Tensor& scores, const at::Tensor& prefix_mask) {
    if (prefix_mask.defined()) scores.narrow(-1, 0, layer.prefix_len).add_(prefix_mask);
    if (step_mask.defined()) scores.add_(step_mask);
    return at::softmax(scores, -1).to(values.scalar_type());
  };
  if (q.device().is_cpu() && !c10::GradMode::is_enabled() && at::get_num_threads() > 1 &&
      batch * cache_heads > 1) {
    // One (row, cache head) per task over the intra-op threads: a decode step's products are
    // too small for the BLAS to thread, and reading the cached keys and values is what costs.
    at::Tensor out = at::empty({batch, cache_heads, group * t, d}, q.options());
    const bool inference = c10::InferenceMode::is_enabled();
    at::parallel_for(0, batch * cache_heads, 1, [&](int64_t begin, int64_t end) {
      c10::InferenceMode guard(inference);
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / cache_heads, h = i % cache_heads;
        const at::Tensor scores = at::mm(qg[b][h], keys[b][h].t()).to(at::kFloat) * scale;
        at::Tensor slice = out[b][h];
        at::mm_out(slice, attend(scores, layer.prefix_mask.defined() ? layer.prefix_mask[b][0] : at::Tensor()),
                   values[b][h]);
      }
    });
    return out.view({batch, heads, t, d});
  }
  const at::Tensor scores = at::matmul(qg, keys.transpose(2, 3)).to(at::kFloat) * scale;
  return at::matmul(attend(scores, layer.prefix_mask), values).view({batch, heads, t, d});
}

}  // namespace kvs::model
