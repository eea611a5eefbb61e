// The tensors of a checkpoint, read by their Hugging Face names from a TensorSource (safetensors:
// one file, or shards through model.safetensors.index.json; GGUF: model/gguf_weights.h), checked
// against the config, converted to the run dtype.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "model/config.h"

namespace kvs::model {

// A projection's rows as a GGUF checkpoint stores them, in blocks of a quantized type (Q8_0, Q4_1,
// ...), kept beside the float32 tensor for CPU decode: block_row_product streams these bytes (Q4_1:
// a sixth of float32's) and gives the float32 product bit for bit. Absent for other checkpoints,
// devices and dtypes.
struct StoredBlocks {
  at::Tensor bytes;   // [out, bytes per row] uint8, rows in the HF order; undefined when absent
  uint32_t type = 0;  // the GGUF tensor type
  bool present() const { return bytes.defined(); }
};

struct LayerBlocks {
  StoredBlocks q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj;
};

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
  LayerBlocks blocks;     // the projections' stored blocks, where they have them
  // The architectures' options (model/config.h), undefined where the config has none:
  at::Tensor q_bias, k_bias, v_bias;  // qkv_bias: [heads * head_dim], [kv_heads * head_dim] x2
  at::Tensor q_norm, k_norm;          // qk_norm: [head_dim], RMSNorm weights of every head
};

struct Weights {
  at::Tensor embed;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  at::Tensor norm;     // [hidden]
  at::Tensor lm_head;  // [vocab, hidden]; the embedding itself when tie_word_embeddings
  StoredBlocks lm_head_blocks;
};

// Where load_weights reads tensors: one implementation per checkpoint format.
class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // The tensor of that HF name with that shape, on `device` in `dtype`; throws naming the file and
  // the tensor when it is missing or of another shape.
  virtual at::Tensor load(const std::string& name, const std::vector<int64_t>& shape,
                          at::Device device, at::ScalarType dtype) = 0;
  // The same tensor's rows in the blocks they are stored in, where that is a quantized block type
  // (after load of the same name has checked its shape); absent by default.
  virtual StoredBlocks load_blocks(const std::string& name);
};

// The projections' stored blocks are kept where CPU decode streams them: float32 on the CPU, with
// row_product available.
Weights load_weights(TensorSource& source, const ModelConfig& config, at::Device device,
                     at::ScalarType dtype);
// The bytes of weights one decode step reads: every projection's stored blocks where it has them,
// else its tensor; the norms; the LM head (the embedding rows are gathered, not streamed).
int64_t decode_weight_bytes(const Weights& weights);

// A Hugging Face directory's safetensors.
Weights load_weights(const std::string& model_dir, const ModelConfig& config, at::Device device,
                     at::ScalarType dtype);

// Writes weights in the HF layout: model.safetensors, or shards of at most max_shard_bytes plus
// model.safetensors.index.json. Stored in `dtype` (F32, F16 or BF16).
void save_weights(const std::string& model_dir, const ModelConfig& config, const Weights& weights,
                  const std::string& dtype, int64_t max_shard_bytes);

}  // namespace kvs::model
