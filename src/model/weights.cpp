#include "model/weights.h"

#include <ATen/ops/from_blob.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/files.h"
#include "core/log.h"
#include "core/safetensors.h"
#include "cpu/row_product.h"

namespace kvs::model {

namespace fs = std::filesystem;

namespace {

at::ScalarType scalar_type_of(DType dtype, const std::string& where) {
  switch (dtype) {
    case DType::F32:
      return at::kFloat;
    case DType::F16:
      return at::kHalf;
    case DType::BF16:
      return at::kBFloat16;
    default:
      throw error_at(where, std::string("dtype ") + dtype_name(dtype) +
                                " is not a floating-point weight type (F32, F16 or BF16)");
  }
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Maps each tensor name to the file holding it: the shard index when there is one, else the
// single model.safetensors.
class CheckpointFiles {
 public:
  explicit CheckpointFiles(const std::string& model_dir) {
    const fs::path index_path = fs::path(model_dir) / "model.safetensors.index.json";
    if (fs::exists(index_path)) {
      read_index(model_dir, index_path.string());
      return;
    }
    const fs::path single = fs::path(model_dir) / "model.safetensors";
    if (!fs::exists(single))
      throw error_at(model_dir, "no model.safetensors or model.safetensors.index.json");
    auto file = std::make_shared<SafetensorsFile>(single.string());
    for (const auto& t : file->tensors()) owner_[t.name] = file;
  }

  // The file holding `name`, or nullptr.
  const SafetensorsFile* find(const std::string& name) const {
    const auto it = owner_.find(name);
    return it == owner_.end() ? nullptr : it->second.get();
  }

 private:
  void read_index(const std::string& model_dir, const std::string& index_path) {
    const auto index =
        nlohmann::json::parse(read_file(index_path, "the safetensors index"), nullptr, false);
    if (index.is_discarded() || !index.is_object())
      throw error_at(index_path, "not a valid JSON object");
    if (!index.contains("weight_map") || !index["weight_map"].is_object())
      throw error_at(index_path, "missing 'weight_map' object");
    if (index.contains("metadata") && index["metadata"].contains("total_size") &&
        !index["metadata"]["total_size"].is_number_unsigned() &&
        !index["metadata"]["total_size"].is_number_integer())
      throw error_at(index_path, "metadata.total_size is not an integer");
    std::map<std::string, std::shared_ptr<SafetensorsFile>> shards;
    for (const auto& [name, shard] : index["weight_map"].items()) {
      if (!shard.is_string())
        throw error_at(index_path, "weight_map['" + name + "'] is not a string");
      const std::string shard_name = shard.get<std::string>();
      auto& file = shards[shard_name];
      if (!file) {
        const fs::path shard_path = fs::path(model_dir) / shard_name;
        if (!fs::exists(shard_path))
          throw error_at(index_path, "shard '" + shard_name + "' (holding '" + name +
                                         "') is missing from the model directory");
        file = std::make_shared<SafetensorsFile>(shard_path.string());
      }
      if (!file->find(name))
        throw error_at(file->path(), "the index says it holds '" + name + "' but it does not");
      owner_[name] = file;
    }
  }

  std::map<std::string, std::shared_ptr<SafetensorsFile>> owner_;
};

class SafetensorsSource : public TensorSource {
 public:
  explicit SafetensorsSource(const std::string& model_dir)
      : files_(model_dir), model_dir_(model_dir) {}

  at::Tensor load(const std::string& name, const std::vector<int64_t>& expected_shape,
                  at::Device device, at::ScalarType dtype) override {
    const SafetensorsFile* file = files_.find(name);
    if (!file) throw error_at(model_dir_, "checkpoint has no tensor '" + name + "'");
    const TensorEntry& entry = file->at(name);
    if (entry.shape != expected_shape)
      throw error_at(file->path(), "tensor '" + name + "' has shape " + shape_string(entry.shape) +
                                       " but config.json implies " + shape_string(expected_shape));
    const at::ScalarType stored =
        scalar_type_of(entry.dtype, file->path() + ": tensor '" + name + "'");
    // The mapping is read-only and outlives nothing: always copy out of it.
    const at::Tensor view = at::from_blob(const_cast<uint8_t*>(file->data(entry)), entry.shape,
                                          at::TensorOptions().dtype(stored));
    return view.to(device, dtype, /*non_blocking=*/false, /*copy=*/true);
  }

 private:
  CheckpointFiles files_;
  std::string model_dir_;
};

}  // namespace

StoredBlocks TensorSource::load_blocks(const std::string&) { return {}; }

Weights load_weights(TensorSource& source, const ModelConfig& c, at::Device device,
                     at::ScalarType dtype) {
  const auto load = [&](const std::string& name, const std::vector<int64_t>& shape) {
    return source.load(name, shape, device, dtype);
  };
  const bool keep_blocks = device.is_cpu() && dtype == at::kFloat && cpu::row_product_available();
  const auto blocks = [&](const std::string& name) {
    return keep_blocks ? source.load_blocks(name) : StoredBlocks{};
  };
  const int64_t hidden = c.hidden_size, q_dim = c.num_attention_heads * c.head_dim,
                kv_dim = c.num_key_value_heads * c.head_dim, inter = c.intermediate_size;
  Weights w;
  w.embed = load("model.embed_tokens.weight", {c.vocab_size, hidden});
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    LayerWeights lw;
    lw.input_norm = load(p + "input_layernorm.weight", {hidden});
    lw.q_proj = load(p + "self_attn.q_proj.weight", {q_dim, hidden});
    lw.k_proj = load(p + "self_attn.k_proj.weight", {kv_dim, hidden});
    lw.v_proj = load(p + "self_attn.v_proj.weight", {kv_dim, hidden});
    lw.o_proj = load(p + "self_attn.o_proj.weight", {hidden, q_dim});
    lw.post_norm = load(p + "post_attention_layernorm.weight", {hidden});
    lw.gate_proj = load(p + "mlp.gate_proj.weight", {inter, hidden});
    lw.up_proj = load(p + "mlp.up_proj.weight", {inter, hidden});
    lw.down_proj = load(p + "mlp.down_proj.weight", {hidden, inter});
    if (c.qkv_bias) {
      lw.q_bias = load(p + "self_attn.q_proj.bias", {q_dim});
      lw.k_bias = load(p + "self_attn.k_proj.bias", {kv_dim});
      lw.v_bias = load(p + "self_attn.v_proj.bias", {kv_dim});
    }
    if (c.qk_norm) {
      lw.q_norm = load(p + "self_attn.q_norm.weight", {c.head_dim});
      lw.k_norm = load(p + "self_attn.k_norm.weight", {c.head_dim});
    }
    lw.blocks = {blocks(p + "self_attn.q_proj.weight"), blocks(p + "self_attn.k_proj.weight"),
                 blocks(p + "self_attn.v_proj.weight"), blocks(p + "self_attn.o_proj.weight"),
                 blocks(p + "mlp.gate_proj.weight"),    blocks(p + "mlp.up_proj.weight"),
                 blocks(p + "mlp.down_proj.weight")};
    w.layers.push_back(std::move(lw));
  }
  w.norm = load("model.norm.weight", {hidden});
  w.lm_head = c.tie_word_embeddings ? w.embed : load("lm_head.weight", {c.vocab_size, hidden});
  w.lm_head_blocks = blocks(c.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight");
  return w;
}

int64_t decode_weight_bytes(const Weights& w) {
  const auto bytes = [](const at::Tensor& t, const StoredBlocks& blocks) {
    return blocks.present() ? blocks.bytes.nbytes() : t.nbytes();
  };
  const auto optional = [](const at::Tensor& t) { return t.defined() ? t.nbytes() : 0; };
  int64_t total = w.norm.nbytes() + bytes(w.lm_head, w.lm_head_blocks);
  for (const LayerWeights& l : w.layers)
    total += l.input_norm.nbytes() + l.post_norm.nbytes() + optional(l.q_bias) +
             optional(l.k_bias) + optional(l.v_bias) + optional(l.q_norm) + optional(l.k_norm) +
             bytes(l.q_proj, l.blocks.q_proj) + bytes(l.k_proj, l.blocks.k_proj) +
             bytes(l.v_proj, l.blocks.v_proj) + bytes(l.o_proj, l.blocks.o_proj) +
             bytes(l.gate_proj, l.blocks.gate_proj) + bytes(l.up_proj, l.blocks.up_proj) +
             bytes(l.down_proj, l.blocks.down_proj);
  return total;
}

Weights load_weights(const std::string& model_dir, const ModelConfig& config, at::Device device,
                     at::ScalarType dtype) {
  SafetensorsSource source(model_dir);
  return load_weights(source, config, device, dtype);
}

namespace {

struct NamedTensor {
  std::string name;
  at::Tensor tensor;
};

std::vector<NamedTensor> named_tensors(const ModelConfig& c, const Weights& w) {
  std::vector<NamedTensor> out{{"model.embed_tokens.weight", w.embed}};
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const LayerWeights& lw = w.layers[l];
    out.push_back({p + "input_layernorm.weight", lw.input_norm});
    out.push_back({p + "self_attn.q_proj.weight", lw.q_proj});
    out.push_back({p + "self_attn.k_proj.weight", lw.k_proj});
    out.push_back({p + "self_attn.v_proj.weight", lw.v_proj});
    if (c.qkv_bias) {
      out.push_back({p + "self_attn.q_proj.bias", lw.q_bias});
      out.push_back({p + "self_attn.k_proj.bias", lw.k_bias});
      out.push_back({p + "self_attn.v_proj.bias", lw.v_bias});
    }
    if (c.qk_norm) {
      out.push_back({p + "self_attn.q_norm.weight", lw.q_norm});
      out.push_back({p + "self_attn.k_norm.weight", lw.k_norm});
    }
    out.push_back({p + "self_attn.o_proj.weight", lw.o_proj});
    out.push_back({p + "post_attention_layernorm.weight", lw.post_norm});
    out.push_back({p + "mlp.gate_proj.weight", lw.gate_proj});
    out.push_back({p + "mlp.up_proj.weight", lw.up_proj});
    out.push_back({p + "mlp.down_proj.weight", lw.down_proj});
  }
  out.push_back({"model.norm.weight", w.norm});
  if (!c.tie_word_embeddings) out.push_back({"lm_head.weight", w.lm_head});
  return out;
}

}  // namespace

void save_weights(const std::string& model_dir, const ModelConfig& config, const Weights& weights,
                  const std::string& dtype, int64_t max_shard_bytes) {
  const std::map<std::string, std::pair<DType, at::ScalarType>> dtypes = {
      {"f32", {DType::F32, at::kFloat}},
      {"f16", {DType::F16, at::kHalf}},
      {"bf16", {DType::BF16, at::kBFloat16}}};
  const auto it = dtypes.find(dtype);
  if (it == dtypes.end()) throw Error("unknown dtype '" + dtype + "' (expected f32, f16 or bf16)");
  const auto [file_dtype, scalar] = it->second;
  fs::create_directories(model_dir);

  // Pack tensors into shards in order; a new shard starts when the next tensor would overflow.
  std::vector<std::vector<NamedTensor>> shards(1);
  int64_t shard_bytes = 0, total_bytes = 0;
  for (auto& nt : named_tensors(config, weights)) {
    nt.tensor = nt.tensor.to(at::kCPU, scalar).contiguous();
    const int64_t bytes = nt.tensor.numel() * static_cast<int64_t>(dtype_size(file_dtype));
    if (shard_bytes > 0 && shard_bytes + bytes > max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(nt);
    shard_bytes += bytes;
    total_bytes += bytes;
  }
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  for (size_t s = 0; s < shards.size(); ++s) {
    std::string file_name = "model.safetensors";
    if (shards.size() > 1)
      file_name = strfmt("model-%05zu-of-%05zu.safetensors", s + 1, shards.size());
    SafetensorsWriter writer;
    writer.set_metadata("format", "pt");
    for (const auto& nt : shards[s]) {
      writer.add(nt.name, file_dtype, nt.tensor.sizes().vec(), nt.tensor.data_ptr(),
                 static_cast<size_t>(nt.tensor.nbytes()));
      weight_map[nt.name] = file_name;
    }
    writer.write((fs::path(model_dir) / file_name).string());
  }
  if (shards.size() > 1) {
    nlohmann::ordered_json index;
    index["metadata"] = {{"total_size", total_bytes}};
    index["weight_map"] = weight_map;
    std::ofstream out(fs::path(model_dir) / "model.safetensors.index.json");
    out << index.dump(2) << "\n";
    if (!out) throw error_at(model_dir, "cannot write model.safetensors.index.json");
  }
}

}  // namespace kvs::model
