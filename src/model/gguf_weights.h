// A GGUF file's tensors under their Hugging Face names (docs/gguf.md §3, §4): token_embd ->
// model.embed_tokens, blk.N.attn_q -> model.layers.N.self_attn.q_proj, ...; dequantized to f32,
// with the converter's Q/K row permutation undone (llama only) so the half-split RoPE applies, then
// cast; and a quantized tensor's blocks as stored (rows permuted alike), which CPU decode streams.
#pragma once

#include <string>

#include "core/gguf.h"
#include "model/config.h"
#include "model/weights.h"

namespace kvs::model {

// The GGUF name of an HF Llama / Qwen2 / Qwen3 tensor name ("model.layers.3.mlp.up_proj.weight"
// -> "blk.3.ffn_up.weight", "...self_attn.q_norm.weight" -> "blk.3.attn_q_norm.weight"); throws
// for a name outside those layouts.
std::string gguf_tensor_name(const std::string& hf_name);

// HF row h*D + s*D/2 + i <- GGUF row h*D + 2i + s, per head of D = rows / heads rows.
at::Tensor undo_rope_permutation(const at::Tensor& gguf_rows, int64_t heads);

class GgufTensorSource : public TensorSource {
 public:
  GgufTensorSource(const gguf::File& file, const ModelConfig& config)
      : file_(file), config_(config) {}
  at::Tensor load(const std::string& name, const std::vector<int64_t>& shape, at::Device device,
                  at::ScalarType dtype) override;
  StoredBlocks load_blocks(const std::string& name) override;

 private:
  const gguf::File& file_;
  const ModelConfig& config_;
};

}  // namespace kvs::model
