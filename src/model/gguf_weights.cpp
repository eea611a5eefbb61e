#include "model/gguf_weights.h"

#include <ATen/ATen.h>

#include <utility>

#include "core/error.h"
#include "model/gguf_dequantize.h"

namespace kvs::model {

namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

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
  throw Error("tensor '" + hf_name + "' has no GGUF name in the Llama layout");
}

at::Tensor undo_rope_permutation(const at::Tensor& gguf_rows, int64_t heads) {
  const int64_t rows = gguf_rows.size(0), cols = gguf_rows.size(1);
  return gguf_rows.view({heads, rows / heads / 2, 2, cols}).transpose(1, 2).reshape({rows, cols});
}

at::Tensor GgufTensorSource::load(const std::string& name, const std::vector<int64_t>& shape,
                                  at::Device device, at::ScalarType dtype) {
  const std::string gguf_name = gguf_tensor_name(name);
  const std::string where = file_.path() + ": tensor '" + gguf_name + "' (" + name + ")";
  const gguf::TensorInfo* info = file_.find_tensor(gguf_name);
  if (!info) throw Error(file_.path() + ": missing tensor '" + gguf_name + "' (" + name + ")");
  std::vector<int64_t> stored(info->dims.rbegin(), info->dims.rend());  // ggml lists dims innermost first
  if (stored != shape)
    throw Error(where + ": shape " + shape_string(stored) + " but the metadata implies " + shape_string(shape));
  at::Tensor values = at::empty(stored, at::TensorOptions().dtype(at::kFloat));
  dequantize(*info, values.data_ptr<float>(), file_.path());
  // The converter interleaved each head's two RoPE halves in Q and K (K with n_head_kv heads).
  if (name.find(".self_attn.q_proj.") != std::string::npos)
    values = undo_rope_permutation(values, config_.num_attention_heads);
  else if (name.find(".self_attn.k_proj.") != std::string::npos)
    values = undo_rope_permutation(values, config_.num_key_value_heads);
  return values.to(device, dtype);
}

}  // namespace kvs::model
