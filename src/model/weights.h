// The tensors of a checkpoint, read by their Hugging Face names from a TensorSource (safetensors:
// one file, or shards through model.safetensors.index.json; GGUF: model/gguf_weights.h), checked
// against the config, converted to the run dtype.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "model/config.h"

namespace kvs::model {

struct LayerWeights {
  at::Tensor input_norm;  // [hidden]
  at::Tensor q_proj;      // [heads * head_dim, hidden]
  at::Tensor k_proj;      // [kv_heads * head_dim, hidden]
  at::Tensor v_proj;      // [kv_heads * head_dim, hidden]
  at::Tensor o_proj;      // [hidden, heads * head_dim]
  at::Tensor post_norm;   // [hidden]
  at::Tensor gate_proj;   // [intermediate, hidden]
  at::Tensor up_proj;     // [intermediate, hidden]
  at::Tensor down_proj;   // [hidden, intermediate]
};

struct Weights {
  at::Tensor embed;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  at::Tensor norm;     // [hidden]
  at::Tensor lm_head;  // [vocab, hidden]; the embedding itself when tie_word_embeddings
};

// Where load_weights reads tensors: one implementation per checkpoint format.
class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // The tensor of that HF name with that shape, on `device` in `dtype`; throws naming the file and
  // the tensor when it is missing or of another shape.
  virtual at::Tensor load(const std::string& name, const std::vector<int64_t>& shape, at::Device device,
                          at::ScalarType dtype) = 0;
};

Weights load_weights(TensorSource& source, const ModelConfig& config, at::Device device,
                     at::ScalarType dtype);
// A Hugging Face directory's safetensors.
Weights load_weights(const std::string& model_dir, const ModelConfig& config, at::Device device,
                     at::ScalarType dtype);

// Writes weights in the HF layout: model.safetensors, or shards of at most max_shard_bytes plus
// model.safetensors.index.json. Stored in `dtype` (F32, F16 or BF16).
void save_weights(const std::string& model_dir, const ModelConfig& config, const Weights& weights,
                  const std::string& dtype, int64_t max_shard_bytes);

}  // namespace kvs::model
