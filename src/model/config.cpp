#include "model/config.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "core/error.h"
#include "core/files.h"
#include "core/gguf.h"

namespace kvs::model {

namespace {

using nlohmann::json;

const json& require(const json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key)) throw error_at(where, "missing required field '" + key + "'");
  return j.at(key);
}

int64_t positive_int(const json& j, const std::string& key, const std::string& where) {
  const json& v = require(j, key, where);
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    throw error_at(where, "field '" + key + "' must be a positive integer, got " + v.dump());
  return v.get<int64_t>();
}

double positive_number(const json& j, const std::string& key, const std::string& where) {
  const json& v = require(j, key, where);
  if (!v.is_number() || v.get<double>() <= 0)
    throw error_at(where, "field '" + key + "' must be a positive number, got " + v.dump());
  return v.get<double>();
}

RopeScaling parse_rope_scaling(const json& v, const std::string& where) {
  if (!v.is_object()) throw error_at(where, "field 'rope_scaling' must be an object or null");
  const std::string type = v.contains("rope_type") ? v["rope_type"].get<std::string>()
                           : v.contains("type")    ? v["type"].get<std::string>()
                                                   : "";
  if (type != "llama3")
    throw error_at(where, "rope_scaling type '" + type + "' is not supported (only llama3)");
  const std::string inner = where + " rope_scaling";
  RopeScaling s;
  s.factor = positive_number(v, "factor", inner);
  s.low_freq_factor = positive_number(v, "low_freq_factor", inner);
  s.high_freq_factor = positive_number(v, "high_freq_factor", inner);
  s.original_max_position_embeddings = positive_int(v, "original_max_position_embeddings", inner);
  if (s.high_freq_factor <= s.low_freq_factor)
    throw error_at(inner, "high_freq_factor must exceed low_freq_factor");
  return s;
}

std::vector<int64_t> parse_token_ids(const json& v, const std::string& key,
                                     const std::string& where) {
  std::vector<int64_t> ids;
  if (v.is_number_integer()) {
    ids.push_back(v.get<int64_t>());
  } else if (v.is_array()) {
    for (const auto& x : v) {
      if (!x.is_number_integer())
        throw error_at(where, "field '" + key + "' must hold integers, got " + x.dump());
      ids.push_back(x.get<int64_t>());
    }
  } else {
    throw error_at(where, "field '" + key + "' must be an integer or a list, got " + v.dump());
  }
  if (ids.empty()) throw error_at(where, "field '" + key + "' is empty");
  return ids;
}

// A llama.* count that must be positive; a missing key is named by File.
int64_t positive_metadata(const gguf::File& file, const std::string& key) {
  const int64_t v = file.get_int(key);
  if (v <= 0) throw error_at(file.path(), "metadata '" + key + "' must be positive, got " + std::to_string(v));
  return v;
}

double positive_float_metadata(const gguf::File& file, const std::string& key) {
  const double v = file.get_float(key);
  if (!(v > 0)) throw error_at(file.path(), "metadata '" + key + "' must be positive, got " + std::to_string(v));
  return v;
}

}  // namespace

const std::vector<ModelArchitecture>& model_architectures() {
  static const std::vector<ModelArchitecture> all = {
      {"mistral", "MistralForCausalLM", "",
       "the llama tensors; sliding_window (null: full attention)", "f16"},
      {"llama", "LlamaForCausalLM", "llama",
       "embed_tokens, per layer input/post-attention RMSNorm, q/k/v/o, gate/up/down, norm, lm_head "
       "(or tied); rope_scaling llama3",
       "f16"},
      {"qwen2", "Qwen2ForCausalLM", "qwen2",
       "the llama tensors plus q_proj/k_proj/v_proj biases (GGUF attn_q/attn_k/attn_v.bias)",
       "bf16"},
      {"qwen3", "Qwen3ForCausalLM", "qwen3",
       "the llama tensors plus q_norm/k_norm, an RMSNorm of each head before RoPE (GGUF "
       "attn_q_norm/attn_k_norm); head_dim required",
       "bf16"}};
  return all;
}

std::string architecture_names() {
  std::string names;
  for (const auto& a : model_architectures()) names += (names.empty() ? "" : ", ") + a.name;
  return names;
}

void set_architecture_options(ModelConfig& c) {
  c.qkv_bias = c.model_type == "qwen2";
  c.qk_norm = c.model_type == "qwen3";
}

namespace {

const ModelArchitecture* find_architecture(const std::string& model_type) {
  for (const auto& a : model_architectures())
    if (a.name == model_type) return &a;
  return nullptr;
}

}  // namespace

std::string native_gpu_dtype(const ModelConfig& config) {
  const ModelArchitecture* a = find_architecture(config.model_type);
  return a ? a->gpu_dtype : "f16";
}

int64_t ModelConfig::parameter_count() const {
  const int64_t attn =
      hidden_size * head_dim * (num_attention_heads * 2 + num_key_value_heads * 2) +
      (qkv_bias ? head_dim * (num_attention_heads + 2 * num_key_value_heads) : 0) +
      (qk_norm ? 2 * head_dim : 0);
  const int64_t mlp = 3 * hidden_size * intermediate_size;
  const int64_t per_layer = attn + mlp + 2 * hidden_size;
  const int64_t embeddings = vocab_size * hidden_size * (tie_word_embeddings ? 1 : 2);
  return num_hidden_layers * per_layer + embeddings + hidden_size;
}

ModelConfig parse_config(const std::string& json_text, const std::string& where) {
  const json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded()) throw error_at(where, "not valid JSON");
  if (!j.is_object()) throw error_at(where, "not a JSON object");
  ModelConfig c;
  const json& type = require(j, "model_type", where);
  const ModelArchitecture* arch =
      type.is_string() ? find_architecture(type.get<std::string>()) : nullptr;
  if (!arch)
    throw error_at(where, "field 'model_type': " + type.dump() +
                              " is not an architecture the runner reads (" + architecture_names() +
                              ")");
  c.model_type = arch->name;
  set_architecture_options(c);
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0] != arch->hf_class)
    throw error_at(where, "field 'architectures': " + j["architectures"][0].dump() + " is not " +
                              arch->hf_class + ", the causal LM of model_type '" + arch->name +
                              "' the runner reads");
  c.vocab_size = positive_int(j, "vocab_size", where);
  c.hidden_size = positive_int(j, "hidden_size", where);
  c.intermediate_size = positive_int(j, "intermediate_size", where);
  c.num_hidden_layers = positive_int(j, "num_hidden_layers", where);
  c.num_attention_heads = positive_int(j, "num_attention_heads", where);
  c.num_key_value_heads = positive_int(j, "num_key_value_heads", where);
  c.max_position_embeddings = positive_int(j, "max_position_embeddings", where);
  c.rms_norm_eps = positive_number(j, "rms_norm_eps", where);
  c.rope_theta = positive_number(j, "rope_theta", where);
  // head_dim is derived when absent (older configs), as the reference does; it is not a default.
  // Qwen3's reference defaults it to 128 instead: there it is required.
  if (c.qk_norm || (j.contains("head_dim") && !j["head_dim"].is_null()))
    c.head_dim = positive_int(j, "head_dim", where);
  else if (c.hidden_size % c.num_attention_heads == 0)
    c.head_dim = c.hidden_size / c.num_attention_heads;
  else
    throw error_at(where, "hidden_size is not divisible by num_attention_heads and no head_dim");
  if (c.head_dim % 2 != 0) throw error_at(where, "head_dim must be even for RoPE");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw error_at(where, "num_attention_heads must be a multiple of num_key_value_heads");
  const json& act = require(j, "hidden_act", where);
  if (act != "silu") throw error_at(where, "hidden_act " + act.dump() + " is not supported (silu)");
  // qwen2's q/k/v biases are its architecture's (the reference has no field for them); a bias on
  // every projection (attention_bias, mlp_bias) is not read.
  for (const char* bias : {"attention_bias", "mlp_bias"})
    if (c.model_type != "qwen2" && j.contains(bias) && j[bias].is_boolean() && j[bias].get<bool>())
      throw error_at(where, std::string("field '") + bias + "' = true is not supported");
  // Qwen's sliding window applies from max_window_layers on, and only with use_sliding_window.
  if ((c.model_type == "qwen2" || c.model_type == "qwen3") && j.contains("use_sliding_window") &&
      j["use_sliding_window"].is_boolean() && j["use_sliding_window"].get<bool>())
    throw error_at(where,
                   "field 'use_sliding_window' = true is not supported (full attention only)");
  // Mistral configs must say whether attention is windowed (null = full): the reference library
  // would silently assume 4096 when the field is missing.
  if (c.model_type == "mistral") {
    const json& sw = require(j, "sliding_window", where);
    if (!sw.is_null()) c.sliding_window = positive_int(j, "sliding_window", where);
  }
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null())
    c.rope_scaling = parse_rope_scaling(j["rope_scaling"], where);
  const json& tie = require(j, "tie_word_embeddings", where);
  if (!tie.is_boolean()) throw error_at(where, "field 'tie_word_embeddings' must be true or false");
  c.tie_word_embeddings = tie.get<bool>();
  c.bos_token_id = parse_token_ids(require(j, "bos_token_id", where), "bos_token_id", where)[0];
  c.eos_token_ids = parse_token_ids(require(j, "eos_token_id", where), "eos_token_id", where);
  if (j.contains("torch_dtype") && j["torch_dtype"].is_string())
    c.torch_dtype = j["torch_dtype"].get<std::string>();
  return c;
}

ModelConfig load_config(const std::string& path) {
  return parse_config(read_file(path, "config.json"), path);
}

ModelConfig config_from_gguf(const gguf::File& f) {
  const std::string& where = f.path();
  const std::string arch = f.get_string("general.architecture");
  std::string read;
  for (const auto& a : model_architectures())
    if (!a.gguf_name.empty()) read += (read.empty() ? "" : ", ") + a.gguf_name;
  const ModelArchitecture* known = find_architecture(arch);
  if (!known || known->gguf_name != arch)
    throw error_at(where, "metadata 'general.architecture': '" + arch +
                              "' is not an architecture the runner reads (" + read + ")");
  ModelConfig c;
  c.model_type = arch;
  set_architecture_options(c);
  // The hyperparameters are under the architecture's name (llama.*, qwen2.*, qwen3.*).
  const auto key = [&arch](const std::string& name) { return arch + "." + name; };
  c.num_hidden_layers = positive_metadata(f, key("block_count"));
  c.max_position_embeddings = positive_metadata(f, key("context_length"));
  c.hidden_size = positive_metadata(f, key("embedding_length"));
  c.intermediate_size = positive_metadata(f, key("feed_forward_length"));
  c.num_attention_heads = positive_metadata(f, key("attention.head_count"));
  c.num_key_value_heads = positive_metadata(f, key("attention.head_count_kv"));
  c.rope_theta = positive_float_metadata(f, key("rope.freq_base"));
  c.rms_norm_eps = positive_float_metadata(f, key("attention.layer_norm_rms_epsilon"));
  if (f.has(key("vocab_size")))
    c.vocab_size = positive_metadata(f, key("vocab_size"));
  else if (f.has("tokenizer.ggml.tokens"))
    c.vocab_size = static_cast<int64_t>(f.get_string_array("tokenizer.ggml.tokens").size());
  else
    throw error_at(where, "missing required metadata '" + key("vocab_size") +
                              "' (and no 'tokenizer.ggml.tokens')");
  if (f.has(key("attention.key_length")))
    c.head_dim = positive_metadata(f, key("attention.key_length"));
  else if (c.hidden_size % c.num_attention_heads == 0)
    c.head_dim = c.hidden_size / c.num_attention_heads;
  else
    throw error_at(where, key("embedding_length") + " is not divisible by " +
                              key("attention.head_count") + " and there is no '" +
                              key("attention.key_length") + "'");
  if (f.has(key("attention.value_length")) &&
      f.get_int(key("attention.value_length")) != c.head_dim)
    throw error_at(where, "metadata '" + key("attention.value_length") +
                              "' differs from the key length " + std::to_string(c.head_dim) +
                              " (not supported)");
  if (f.has(key("rope.dimension_count")) && f.get_int(key("rope.dimension_count")) != c.head_dim)
    throw error_at(where, "metadata '" + key("rope.dimension_count") + "': partial rotary (" +
                              std::to_string(f.get_int(key("rope.dimension_count"))) + " of " +
                              std::to_string(c.head_dim) + " dims) is not supported");
  if (const auto scaling = f.find_string(key("rope.scaling.type")); scaling && *scaling != "none")
    throw error_at(
        where, "metadata '" + key("rope.scaling.type") + "': '" + *scaling + "' is not supported");
  if (f.find_tensor("rope_freqs.weight"))
    throw error_at(where, "tensor 'rope_freqs.weight': per-dimension RoPE factors (Llama 3.1 "
                          "scaling) are not supported");
  if (c.head_dim % 2 != 0) throw error_at(where, "the head dimension must be even for RoPE");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw error_at(where, key("attention.head_count") + " must be a multiple of " +
                              key("attention.head_count_kv"));
  c.tie_word_embeddings = f.find_tensor("output.weight") == nullptr;  // as llama.cpp and HF do
  c.bos_token_id = f.get_int("tokenizer.ggml.bos_token_id");
  c.eos_token_ids = {f.get_int("tokenizer.ggml.eos_token_id")};
  c.torch_dtype = "float32";  // what the loader dequantizes to
  return c;
}

ModelConfig load_model_config(const std::string& model_arg) {
  const Checkpoint checkpoint = resolve_checkpoint(model_arg);
  if (checkpoint.kind == CheckpointKind::gguf) return config_from_gguf(gguf::File::open(checkpoint.path));
  const std::string path = (std::filesystem::path(checkpoint.path) / "config.json").string();
  if (!std::filesystem::exists(path)) throw error_at(checkpoint.path, "no config.json in the model directory");
  return load_config(path);
}

std::string config_to_json(const ModelConfig& c) {
  nlohmann::ordered_json j;
  const ModelArchitecture* arch = find_architecture(c.model_type);
  if (!arch) throw Error("config_to_json: unknown model_type '" + c.model_type + "'");
  j["architectures"] = {arch->hf_class};
  j["model_type"] = c.model_type;
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.hidden_size;
  j["intermediate_size"] = c.intermediate_size;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["num_attention_heads"] = c.num_attention_heads;
  j["num_key_value_heads"] = c.num_key_value_heads;
  j["head_dim"] = c.head_dim;
  j["hidden_act"] = "silu";
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["rms_norm_eps"] = c.rms_norm_eps;
  j["rope_theta"] = c.rope_theta;
  if (c.model_type == "mistral")
    j["sliding_window"] = c.sliding_window ? nlohmann::ordered_json(*c.sliding_window) : nullptr;
  if (c.rope_scaling) {
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", c.rope_scaling->factor},
                         {"low_freq_factor", c.rope_scaling->low_freq_factor},
                         {"high_freq_factor", c.rope_scaling->high_freq_factor},
                         {"original_max_position_embeddings",
                          c.rope_scaling->original_max_position_embeddings}};
  } else {
    j["rope_scaling"] = nullptr;
  }
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  j["bos_token_id"] = c.bos_token_id;
  if (c.eos_token_ids.size() == 1)
    j["eos_token_id"] = c.eos_token_ids[0];
  else
    j["eos_token_id"] = c.eos_token_ids;
  if (c.model_type == "qwen2" || c.model_type == "qwen3") j["use_sliding_window"] = false;
  if (c.model_type != "qwen2") j["attention_bias"] = false;  // qwen2's q/k/v biases have no field
  if (c.model_type == "llama") j["mlp_bias"] = false;
  j["torch_dtype"] = c.torch_dtype.empty() ? "float32" : c.torch_dtype;
  return j.dump(2) + "\n";
}

}  // namespace kvs::model
