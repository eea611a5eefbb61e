// The decoder-only transformer of Mistral / Llama / Qwen2 / Qwen3 (HF semantics): RMSNorm in fp32,
// half-split RoPE, GQA, SwiGLU, optional sliding window; q/k/v biases (qwen2) and a per-head q/k
// RMSNorm before RoPE (qwen3) where the config has them. Prefill runs layer by layer over the whole
// prompt with bounded memory and exposes each layer's post-RoPE K/V and window queries to an
// observer (where eviction plugs in); extend() continues any batch of rows from a DecodeCache.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/attention.h"
#include "model/config.h"
#include "model/decode_observer.h"
#include "model/kv_cache.h"
#include "model/prefill_observer.h"
#include "model/runtime.h"
#include "model/weights.h"

namespace kvs::model {

struct PrefillOptions {
  AttentionBackend attention = AttentionBackend::Auto;
  int64_t block_size = 1024;      // query rows per attention block and token rows per MLP chunk
  bool all_logits = false;        // logits of every prompt position, else of the last only
  bool keep_cache = true;         // return the full, uncompressed cache (batch 1) for decoding
  int64_t decode_capacity = 0;    // decode slots to reserve in the returned cache
  PrefillObserver* observer = nullptr;
};

struct PrefillResult {
  at::Tensor logits;  // [positions, vocab] float32; positions = n with all_logits, else 1
  DecodeCache cache;  // empty unless keep_cache
};

class Transformer {
 public:
  Transformer(ModelConfig config, Weights weights);
  // model_arg: anything core/checkpoint.h resolves (an HF directory, a .gguf file, a name).
  static Transformer load(const std::string& model_arg, const LoadOptions& options);

  const ModelConfig& config() const { return config_; }
  at::Device device() const { return weights_.embed.device(); }
  at::ScalarType dtype() const { return weights_.embed.scalar_type(); }
  // What a run reports it used: --dtype's spelling ("f32", "f16", "bf16") and "cpu" | "cuda".
  std::string dtype_label() const;
  std::string device_label() const { return device().is_cuda() ? "cuda" : "cpu"; }
  const Weights& weights() const { return weights_; }
  const at::Tensor& rope_inv_freq() const { return inv_freq_; }  // [head_dim / 2] float32

  PrefillResult prefill(const std::vector<int32_t>& ids, const PrefillOptions& options) const;

  // Feeds tokens [batch, t] (int64) to every row of the cache, appending their K/V; returns the
  // logits [batch, t, vocab] in float32. Positions continue from cache.next_position. An observer
  // sees each layer's queries of the fed tokens.
  at::Tensor extend(const at::Tensor& tokens, DecodeCache& cache,
                    DecodeStepObserver* observer = nullptr) const;

 private:
  at::Tensor final_logits(const at::Tensor& hidden) const;

  ModelConfig config_;
  Weights weights_;
  at::Tensor inv_freq_;  // [head_dim / 2] float32, RoPE frequencies (llama3 scaling applied)
};

}  // namespace kvs::model
