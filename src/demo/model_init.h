// The demo model's shape (a small Mistral: GQA, RoPE, RMSNorm, SwiGLU, untied head) and its
// seeded initial weights, as trainable float32 leaves in the runner's Weights layout.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/weights.h"

namespace kvs::demo {

// head_dim is set on its own, as Mistral's config allows: a head must be wide enough to carry the
// token it copies. With 32-wide heads a 128-wide model never learned to copy over the 384-word
// lexicon; with 64-wide heads it did in a few hundred steps (data/demo/README.md). rope_theta is
// Mistral-7B-Instruct-v0.2's: the slowest rotations stay nearly still across a 2k-token prompt,
// so a head can match content at any distance.
struct ModelShape {
  int64_t layers = 2;
  int64_t hidden = 128;
  int64_t heads = 4;
  int64_t kv_heads = 2;
  int64_t head_dim = 64;
  int64_t intermediate = 384;
  double rope_theta = 1e6;
  int64_t max_positions = 8192;
};

// vocab_size, bos and eos come from the tokenizer; errors on shapes the runner cannot run.
model::ModelConfig demo_model_config(const ModelShape& shape, int64_t vocab_size, int64_t bos_id,
                                     int64_t eos_id);

// PyTorch-default scales: matrices N(0, 1/(3 fan_in)), embeddings N(0, 1), unit norms. Every
// tensor requires grad.
model::Weights init_weights(const model::ModelConfig& config, uint64_t seed);

// The weight matrices (decayed by AdamW) and the rest (norms, embedding: not decayed).
std::vector<at::Tensor> decayed_parameters(const model::Weights& weights);
std::vector<at::Tensor> undecayed_parameters(const model::Weights& weights);

}  // namespace kvs::demo
