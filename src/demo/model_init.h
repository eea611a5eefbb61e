// The demo model's shape (a small Mistral: GQA, RoPE, RMSNorm, SwiGLU, untied head) and its
// seeded initial weights, as trainable float32 leaves in the runner's Weights layout.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "demo/train_options.h"
#include "model/config.h"
#include "model/weights.h"

namespace kvs::demo {

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
