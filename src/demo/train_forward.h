// The training forward pass of the demo model, built from the runner's own blocks (rms_norm,
// swiglu_mlp, rope_tables / apply_rope, prefill_attention) in the order Transformer::prefill
// applies them, so the trained weights are exactly what the runner runs. Sequences of a batch are
// packed end to end (no padding): projections and MLP run on all tokens at once, attention per
// sequence. Autograd flows through every op.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "demo/training_data.h"
#include "model/config.h"
#include "model/weights.h"

namespace kvs::demo {

struct PackedBatch {
  at::Tensor ids;                // [tokens] int64, the sequences end to end
  std::vector<int64_t> offsets;  // start of each sequence
  std::vector<int64_t> lengths;
  at::Tensor predict_at;         // [answers] int64: packed positions whose next token is an answer
  at::Tensor targets;            // [answers] int64: that answer token
  at::Tensor context_at;         // [others] int64: every other position with a next token
  at::Tensor context_targets;    // [others] int64: that token
  int64_t max_length = 0;
};

PackedBatch pack_batch(const std::vector<TrainingSequence>& sequences);

// [tokens, hidden] hidden states after the last layer (before the final norm).
at::Tensor final_hidden(const model::ModelConfig& config, const model::Weights& weights,
                        const at::Tensor& inv_freq, const PackedBatch& batch);

// [positions, vocab] float32 logits of the hidden states at `positions`.
at::Tensor logits_at(const model::ModelConfig& config, const model::Weights& weights,
                     const at::Tensor& hidden, const at::Tensor& positions);

// logits_at(final_hidden(...), batch.predict_at): the answer tokens' logits.
at::Tensor answer_logits(const model::ModelConfig& config, const model::Weights& weights,
                         const at::Tensor& inv_freq, const PackedBatch& batch);

}  // namespace kvs::demo
