// The model's hyperparameters: config.json of a Hugging Face Mistral, Llama, Qwen2 or Qwen3
// checkpoint, or the <arch>.* metadata of a GGUF file (llama, qwen2, qwen3). Torch-free.
// The architectures are one forward pass; what sets them apart is a few options here: q/k/v
// biases (qwen2), an RMSNorm over each head's queries and keys before RoPE (qwen3), a head_dim
// independent of hidden_size / heads, tied embeddings.
// Every field the forward pass depends on is required: a missing one is an error, never a default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvs::gguf {
class File;
}

namespace kvs::model {

struct RopeScaling {  // rope_scaling {"rope_type": "llama3", ...}
  double factor = 0;
  double low_freq_factor = 0;
  double high_freq_factor = 0;
  int64_t original_max_position_embeddings = 0;
};

struct ModelConfig {
  std::string model_type;  // "mistral" | "llama" | "qwen2" | "qwen3" (model_architectures())
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;  // explicit in newer configs, else hidden_size / num_attention_heads
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 0;
  double rope_theta = 0;
  std::optional<int64_t> sliding_window;   // null or absent: full attention
  std::optional<RopeScaling> rope_scaling;  // llama3 only
  bool tie_word_embeddings = false;
  bool qkv_bias = false;  // qwen2: the q, k and v projections add a bias
  bool qk_norm = false;   // qwen3: q_norm / k_norm, an RMSNorm of each head_dim-wide head, pre-RoPE
  int64_t bos_token_id = -1;
  std::vector<int64_t> eos_token_ids;  // config's eos_token_id, a number or a list
  std::string torch_dtype;             // as stored ("bfloat16", ...), informational

  int64_t kv_group_size() const { return num_attention_heads / num_key_value_heads; }
  int64_t parameter_count() const;
};

// An architecture the runner reads: its model_type (config.json) and general.architecture (GGUF),
// and what it reads beyond the common tensors (for `kvsearch models`).
struct ModelArchitecture {
  std::string name;       // model_type
  std::string hf_class;   // config.json's architectures[0]
  std::string gguf_name;  // general.architecture, empty where GGUF files of it are not read
  std::string reads;      // one line: the tensors and fields beyond the llama ones
  std::string gpu_dtype;  // --dtype auto on CUDA: its native half type, "f16" or "bf16"
};
const std::vector<ModelArchitecture>& model_architectures();
// "mistral, llama, qwen2, qwen3"
std::string architecture_names();
// --dtype auto's type on CUDA for config.model_type: bf16 for Qwen (its checkpoints' own type),
// f16 for llama and mistral (the paper's setting).
std::string native_gpu_dtype(const ModelConfig& config);
// The options of the forward pass that config.model_type implies (qkv_bias, qk_norm).
void set_architecture_options(ModelConfig& config);

// Parses and validates config.json; errors name the file and the field.
ModelConfig load_config(const std::string& path);
ModelConfig parse_config(const std::string& json_text, const std::string& where);
std::string config_to_json(const ModelConfig& config);  // the HF layout, for writing checkpoints

// From a GGUF file's llama.* and tokenizer.ggml.* metadata (docs/gguf.md §1, §4); errors name
// the file and the key. Architectures other than llama, qwen2 and qwen3 are refused by name.
ModelConfig config_from_gguf(const gguf::File& file);

// The config of whatever a --model argument names (core/checkpoint.h): <dir>/config.json, or
// the GGUF file's metadata.
ModelConfig load_model_config(const std::string& model_arg);

}  // namespace kvs::model
