#include "model/gguf_weights.h"

#include <ATen/ATen.h>

#include <cstring>
#include <utility>

#include "core/error.h"
#include "cpu/gguf_dequantize.h"

namespace kvs::model {

namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

std::string gguf_tensor_name(const std::string& hf_name) {
  static const std::pair<const char*, const char*> top_level[] = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"}};
  for (const auto& [hf, gguf] : top_level)
    if (hf_name == hf) return gguf;
  static const std::pair<const char*, const char*> per_layer[] = {
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.q_proj.bias", "attn_q.bias"},  // qwen2
      {"self_attn.k_proj.bias", "attn_k.bias"},
      {"self_attn.v_proj.bias", "attn_v.bias"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},  // qwen3
      {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"}};
  const std::string layers = "model.layers.";
  if (starts_with(hf_name, layers)) {
    const size_t dot = hf_name.find('.', layers.size());
    const std::string index = hf_name.substr(layers.size(), dot - layers.size());
    const std::string rest = dot == std::string::npos ? "" : hf_name.substr(dot + 1);
    for (const auto& [hf, gguf] : per_layer)
      if (rest == hf) return "blk." + index + "." + gguf;
  }
  throw Error("tensor '" + hf_name + "' has no GGUF name in the llama / qwen2 / qwen3 layout");
}

at::Tensor undo_rope_permutation(const at::Tensor& gguf_rows, int64_t heads) {
  const int64_t rows = gguf_rows.size(0), cols = gguf_rows.size(1);
  return gguf_rows.view({heads, rows / heads / 2, 2, cols}).transpose(1, 2).reshape({rows, cols});
}

namespace {

// The converter interleaved each head's two RoPE halves in Q and K (K with n_head_kv heads): the
// number of heads whose rows to put back, or 0 for a tensor it left as it was. Only llama's: qwen2
// and qwen3 keep the half-split order (llama.cpp's NEOX RoPE).
int64_t permuted_heads(const std::string& hf_name, const ModelConfig& config) {
  if (config.model_type != "llama") return 0;
  if (hf_name.find(".self_attn.q_proj.") != std::string::npos) return config.num_attention_heads;
  if (hf_name.find(".self_attn.k_proj.") != std::string::npos) return config.num_key_value_heads;
  return 0;
}

}  // namespace

at::Tensor GgufTensorSource::load(const std::string& name, const std::vector<int64_t>& shape,
                                  at::Device device, at::ScalarType dtype) {
  const std::string gguf_name = gguf_tensor_name(name);
  const std::string where = file_.path() + ": tensor '" + gguf_name + "' (" + name + ")";
  const gguf::TensorInfo* info = file_.find_tensor(gguf_name);
  if (!info) throw Error(file_.path() + ": missing tensor '" + gguf_name + "' (" + name + ")");
  std::vector<int64_t> stored(info->dims.rbegin(),
                              info->dims.rend());  // ggml lists dims innermost first
  if (stored != shape)
    throw Error(where + ": shape " + shape_string(stored) + " but the metadata implies " +
                shape_string(shape));
  at::Tensor values = at::empty(stored, at::TensorOptions().dtype(at::kFloat));
  cpu::dequantize(*info, values.data_ptr<float>(), file_.path());
  if (const int64_t heads = permuted_heads(name, config_))
    values = undo_rope_permutation(values, heads);
  return values.to(device, dtype);
}

StoredBlocks GgufTensorSource::load_blocks(const std::string& name) {
  const gguf::TensorInfo* info = file_.find_tensor(gguf_tensor_name(name));
  if (!info || info->dims.size() != 2 || !cpu::is_block_quantized(info->type)) return {};
  const int64_t rows = static_cast<int64_t>(info->dims[1]);
  const int64_t row_bytes = static_cast<int64_t>(info->nbytes) / rows;
  at::Tensor bytes = at::empty({rows, row_bytes}, at::TensorOptions().dtype(at::kByte));
  std::memcpy(bytes.data_ptr<uint8_t>(), info->data, info->nbytes);
  // Whole rows of blocks move with the permutation, as the float rows do in load.
  if (const int64_t heads = permuted_heads(name, config_))
    bytes = undo_rope_permutation(bytes, heads).contiguous();
  return {bytes, info->type};
}

}  // namespace kvs::model
