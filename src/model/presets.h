// Random-weight checkpoints in the real Hugging Face layout, for tests and benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"

namespace kvs::model {

// tiny: 2 layers, hidden 64, 4 heads, 2 KV heads; small: ~15M parameters; 110m: the Llama-2 110M
// shape with GQA; tiny-llama: tiny with model_type llama and rope_scaling llama3; tiny-qwen2: tiny
// with q/k/v biases and tied embeddings; tiny-qwen3: tiny with per-head q/k norms and head_dim 32
// (not hidden / heads); qwen3-0.6b: Qwen3-0.6B's shapes; llama-0.6b: the same as a llama.
ModelConfig preset_config(const std::string& preset, int64_t vocab_size);
std::vector<std::string> preset_names();

struct MakeModelOptions {
  std::string preset = "tiny";
  uint64_t seed = 0;
  std::string dtype = "f32";          // f32 | f16 | bf16, as stored on disk
  std::string tokenizer_file;         // copied in as tokenizer.model (tokenizer.json: under its
                                      // name); sets the vocabulary size
  int64_t max_shard_bytes = 1 << 30;  // larger checkpoints are sharded with an index
  int64_t sliding_window = 0;         // 0: null (full attention)
};

// Writes config.json, the safetensors file(s) and tokenizer.model into out_dir; returns the config.
ModelConfig make_random_model(const std::string& out_dir, const MakeModelOptions& options);

}  // namespace kvs::model
