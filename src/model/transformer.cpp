#include "model/transformer.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>

#include "core/checkpoint.h"
#include "core/error.h"
#include "core/gguf.h"
#include "model/attention.h"
#include "model/gguf_weights.h"
#include "model/layers.h"
#include "model/rope.h"
#include "model/runtime.h"

namespace kvs::model {

namespace {

at::ScalarType resolve_dtype(const std::string& requested, const std::string& device,
                             const ModelConfig& config) {
  const std::string dtype = requested != "auto" ? requested
                            : device == "cuda"  ? native_gpu_dtype(config)
                                                : "f32";
  if (dtype == "f32") return at::kFloat;
  if (dtype == "f16") return at::kHalf;
  if (dtype == "bf16") return at::kBFloat16;
  throw Error("unknown dtype '" + dtype + "' (expected auto, f32, f16 or bf16)");
}

}  // namespace

Transformer::Transformer(ModelConfig config, Weights weights)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      inv_freq_(rope_inverse_frequencies(config_)) {}

Transformer Transformer::load(const std::string& model_arg, const LoadOptions& options) {
  const Checkpoint checkpoint = resolve_checkpoint(model_arg);
  const std::string device = resolve_device(options.device);
  if (checkpoint.kind == CheckpointKind::gguf) {
    const gguf::File file = gguf::File::open(checkpoint.path);
    ModelConfig config = config_from_gguf(file);
    const at::ScalarType dtype = resolve_dtype(options.dtype, device, config);
    GgufTensorSource source(file, config);
    Weights weights = load_weights(source, config, at::Device(device), dtype);
    return Transformer(std::move(config), std::move(weights));
  }
  ModelConfig config = load_model_config(checkpoint.path);
  const at::ScalarType dtype = resolve_dtype(options.dtype, device, config);
  Weights weights = load_weights(checkpoint.path, config, at::Device(device), dtype);
  return Transformer(std::move(config), std::move(weights));
}

std::string Transformer::dtype_label() const {
  switch (dtype()) {
    case at::kHalf:
      return "f16";
    case at::kBFloat16:
      return "bf16";
    case at::kFloat:
      return "f32";
    default:
      return c10::toString(dtype());
  }
}

at::Tensor Transformer::final_logits(const at::Tensor& hidden) const {
  return project(rms_norm(hidden, weights_.norm, config_.rms_norm_eps), weights_.lm_head,
                 weights_.lm_head_blocks)
      .to(at::kFloat);
}

PrefillResult Transformer::prefill(const std::vector<int32_t>& ids,
                                   const PrefillOptions& options) const {
  c10::InferenceMode inference;
  const int64_t n = static_cast<int64_t>(ids.size());
  if (n == 0) throw Error("prefill: empty prompt");
  if (n > config_.max_position_embeddings)
    throw Error("prefill: the prompt has " + std::to_string(n) +
                " tokens, more than max_position_embeddings " +
                std::to_string(config_.max_position_embeddings));
  for (int32_t id : ids)
    if (id < 0 || id >= config_.vocab_size)
      throw Error("prefill: token id " + std::to_string(id) + " outside the vocabulary of " +
                  std::to_string(config_.vocab_size));
  const int64_t heads = config_.num_attention_heads, kv_heads = config_.num_key_value_heads,
                d = config_.head_dim, block = std::max<int64_t>(1, options.block_size);
  const double eps = config_.rms_norm_eps;
  const at::Tensor token_ids =
      at::tensor(std::vector<int64_t>(ids.begin(), ids.end()), at::kLong).to(device());
  at::Tensor x = at::embedding(weights_.embed, token_ids);  // [n, hidden]
  const RopeTables rope = rope_tables(inv_freq_, 0, n, dtype(), device());
  PrefillAttentionOptions attention;
  attention.backend = options.attention;
  attention.block_size = block;
  attention.sliding_window = config_.sliding_window;
  const int64_t window = options.observer ? std::min(options.observer->window(), n) : 0;
  const uint32_t signals = options.observer ? options.observer->signals() : kSignalNone;

  PrefillResult result;
  if (options.keep_cache) {
    result.cache.batch = 1;
    result.cache.next_position = n;
  }
  for (int64_t l = 0; l < config_.num_hidden_layers; ++l) {
    const LayerWeights& w = weights_.layers[l];
    {
      const at::Tensor h = rms_norm(x, w.input_norm, eps);
      // [heads, n, d]; the biases and per-head norms where the architecture has them
      const at::Tensor q_pre =
          project_heads(h, w.q_proj, w.blocks.q_proj, w.q_bias, w.q_norm, heads, eps)
              .transpose(0, 1);
      const at::Tensor q = apply_rope(q_pre, rope).contiguous();
      const at::Tensor k =
          apply_rope(project_heads(h, w.k_proj, w.blocks.k_proj, w.k_bias, w.k_norm, kv_heads, eps)
                         .transpose(0, 1),
                     rope)
              .contiguous();
      const at::Tensor v = project_heads(h, w.v_proj, w.blocks.v_proj, w.v_bias, {}, kv_heads, eps)
                               .transpose(0, 1)
                               .contiguous();
      const bool column_sums = signals & kSignalColumnSums;
      at::Tensor row_lse;  // the fused attention's, which the column sums start from
      const at::Tensor attn =
          prefill_attention(q, k, v, attention, column_sums ? &row_lse : nullptr);  // [heads, n, d]
      if (options.observer) {
        const at::Tensor window_queries = q.narrow(1, n - window, window);
        PrefillLayer seen{l, k, v, window_queries};
        if (column_sums) seen.column_sums = prefill_attention_column_sums(q, k, attention, row_lse);
        if (signals & kSignalPreRopeQueries) seen.pre_rope_queries = q_pre.contiguous();
        if (signals & kSignalOutputProjection) seen.output_projection = w.o_proj;
        seen.rope_inv_freq = inv_freq_;
        options.observer->on_layer(seen);
      }
      if (options.keep_cache)
        result.cache.layers.push_back(
            assemble_layer_cache({{k, v}}, options.decode_capacity));
      x.add_(project(attn.transpose(0, 1).reshape({n, heads * d}), w.o_proj, w.blocks.o_proj));
    }
    // The MLP in row chunks bounds the [rows, intermediate] activations.
    for (int64_t r0 = 0; r0 < n; r0 += block) {
      at::Tensor rows = x.narrow(0, r0, std::min(block, n - r0));
      rows.add_(swiglu_mlp(rms_norm(rows, w.post_norm, eps), w));
    }
  }
  if (options.all_logits) {
    result.logits = at::empty({n, config_.vocab_size}, at::TensorOptions().dtype(at::kFloat).device(device()));
    for (int64_t r0 = 0; r0 < n; r0 += block) {
      const int64_t rows = std::min(block, n - r0);
      result.logits.narrow(0, r0, rows).copy_(final_logits(x.narrow(0, r0, rows)));
    }
  } else {
    result.logits = final_logits(x.narrow(0, n - 1, 1));
  }
  return result;
}

at::Tensor Transformer::extend(const at::Tensor& tokens, DecodeCache& cache,
                               DecodeStepObserver* observer) const {
  c10::InferenceMode inference;
  const int64_t batch = tokens.size(0), t = tokens.size(1);
  if (batch != cache.batch)
    throw Error("extend: " + std::to_string(batch) + " token rows for a cache of " +
                std::to_string(cache.batch) + " rows");
  const bool per_row = !cache.row_positions.empty();
  if (per_row && static_cast<int64_t>(cache.row_positions.size()) != batch)
    throw Error("extend: " + std::to_string(cache.row_positions.size()) +
                " row positions for a batch of " + std::to_string(batch));
  const int64_t last =
      per_row ? *std::max_element(cache.row_positions.begin(), cache.row_positions.end())
              : cache.next_position;
  if (last + t > config_.max_position_embeddings)
    throw Error("extend: position " + std::to_string(last + t) +
                " exceeds max_position_embeddings " +
                std::to_string(config_.max_position_embeddings));
  reserve_decode_slots(cache, t);
  const int64_t heads = config_.num_attention_heads, kv_heads = config_.num_key_value_heads,
                d = config_.head_dim;
  const double eps = config_.rms_norm_eps;
  const RopeTables rope =
      per_row ? rope_tables_rows(inv_freq_, cache.row_positions, t, dtype(), device())
              : rope_tables(inv_freq_, cache.next_position, t, dtype(), device());
  at::Tensor x = at::embedding(weights_.embed, tokens.to(device(), at::kLong));  // [batch, t, hidden]
  for (int64_t l = 0; l < config_.num_hidden_layers; ++l) {
    const LayerWeights& w = weights_.layers[l];
    LayerCache& layer = cache.layers[l];
    const at::Tensor h = rms_norm(x, w.input_norm, eps);
    const at::Tensor q_pre =
        project_heads(h, w.q_proj, w.blocks.q_proj, w.q_bias, w.q_norm, heads, eps).transpose(1, 2);
    const at::Tensor q = apply_rope(q_pre, rope);
    if (observer) observer->on_layer(DecodeStepLayer{l, q, q_pre});
    at::Tensor k =
        apply_rope(project_heads(h, w.k_proj, w.blocks.k_proj, w.k_bias, w.k_norm, kv_heads, eps)
                       .transpose(1, 2),
                   rope);
    at::Tensor v =
        project_heads(h, w.v_proj, w.blocks.v_proj, w.v_bias, {}, kv_heads, eps).transpose(1, 2);
    if (layer.heads != kv_heads) {  // a per-query-head cache stores every head's copy
      k = k.repeat_interleave(layer.heads / kv_heads, 1);
      v = v.repeat_interleave(layer.heads / kv_heads, 1);
    }
    append_entries(layer, k, v);
    // Slots are positions only in an uncompressed cache; only there can a window be measured.
    const bool slots_are_positions = layer.used == cache.next_position + t && !layer.prefix_mask.defined();
    const at::Tensor attn =
        cached_attention(q, layer, slots_are_positions ? config_.sliding_window : std::nullopt);
    x = x + project(attn.transpose(1, 2).reshape({batch, t, heads * d}), w.o_proj, w.blocks.o_proj);
    x = x + swiglu_mlp(rms_norm(x, w.post_norm, eps), w);
  }
  cache.next_position += t;
  for (int64_t& p : cache.row_positions) p += t;
  return final_logits(x);
}

}  // namespace kvs::model
