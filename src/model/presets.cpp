#include "model/presets.h"

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "model/weights.h"
#include "tokenizer/synthetic_bpe.h"
#include "tokenizer/tokenizer.h"

namespace kvs::model {

namespace fs = std::filesystem;

namespace {

ModelConfig base_config(int64_t vocab_size) {
  ModelConfig c;
  c.model_type = "mistral";
  c.vocab_size = vocab_size;
  c.max_position_embeddings = 32768;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 1e6;
  c.bos_token_id = 1;
  c.eos_token_ids = {2};
  return c;
}

}  // namespace

std::vector<std::string> preset_names() {
  return {"tiny",  "tiny-llama", "tiny-llama3", "tiny-qwen2", "tiny-qwen3",
          "small", "110m",       "qwen3-0.6b",  "llama-0.6b"};
}

ModelConfig preset_config(const std::string& preset, int64_t vocab_size) {
  ModelConfig c = base_config(vocab_size);
  auto shape = [&c](int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads, int64_t inter,
                    bool tied) {
    c.num_hidden_layers = layers;
    c.hidden_size = hidden;
    c.num_attention_heads = heads;
    c.num_key_value_heads = kv_heads;
    c.head_dim = hidden / heads;
    c.intermediate_size = inter;
    c.tie_word_embeddings = tied;
  };
  if (preset == "tiny" || preset == "tiny-llama" || preset == "tiny-llama3") {
    shape(2, 64, 4, 2, 160, false);
    if (preset != "tiny") {
      c.model_type = "llama";
      c.rope_theta = 500000;
      // A short original context so that the scaled, blended and kept bands all occur.
      c.rope_scaling = RopeScaling{8.0, 1.0, 4.0, 256};
    }
    if (preset == "tiny-llama3") {
      // Llama-3.1's token ids: BOS <|begin_of_text|>, EOS <|end_of_text|>, <|eom_id|>, <|eot_id|>.
      c.bos_token_id = 128000;
      c.eos_token_ids = {128001, 128008, 128009};
    }
  } else if (preset == "tiny-qwen2" || preset == "tiny-qwen3") {
    shape(2, 64, 4, 2, 160, preset == "tiny-qwen2");
    c.model_type = preset.substr(5);
    if (preset == "tiny-qwen3") c.head_dim = 32;  // not hidden / heads, as Qwen3's own configs
  } else if (preset == "qwen3-0.6b" || preset == "llama-0.6b") {
    // Qwen3-0.6B's shapes (its vocabulary unless a tokenizer sets one); llama-0.6b: the same
    // shapes without the per-head norms, the baseline of `bench runner`.
    shape(28, 1024, 16, 8, 3072, true);
    c.head_dim = 128;
    c.model_type = preset.substr(0, 5);
    if (vocab_size == 32000) c.vocab_size = 151936;
  } else if (preset == "small") {
    shape(6, 288, 6, 2, 768, true);  // llama2.c's 15M shape, with GQA
  } else if (preset == "110m") {
    shape(12, 768, 12, 4, 2048, true);  // llama2.c's 110M shape, with GQA
  } else {
    std::string names;
    for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw Error("unknown preset '" + preset + "' (expected one of " + names + ")");
  }
  set_architecture_options(c);
  return c;
}

ModelConfig make_random_model(const std::string& out_dir, const MakeModelOptions& options) {
  std::string tokenizer_file = options.tokenizer_file;
  fs::create_directories(out_dir);
  if (tokenizer_file.empty() && options.preset == "tiny-llama3") {
    tokenizer_file = (fs::path(out_dir) / "tokenizer.model").string();
    tokenizer::write_synthetic_tiktoken(tokenizer_file);
  }
  int64_t vocab_size = 32000;
  std::unique_ptr<tokenizer::Tokenizer> tok;
  if (!tokenizer_file.empty()) {
    tok = tokenizer::load_tokenizer_file(tokenizer_file);
    vocab_size = tok->vocab_size();
  }
  ModelConfig c = preset_config(options.preset, vocab_size);
  if (tok && options.preset != "tiny-llama3") {  // tiny-llama3 keeps Llama-3.1's ids
    if (tok->bos_id() >= 0) c.bos_token_id = tok->bos_id();  // Qwen's tokenizers have no BOS
    c.eos_token_ids.assign(tok->eos_ids().begin(), tok->eos_ids().end());
  }
  if (options.sliding_window > 0) {
    if (c.model_type != "mistral") throw Error("--sliding-window needs a mistral preset");
    c.sliding_window = options.sliding_window;
  }
  c.torch_dtype = options.dtype == "f32" ? "float32" : options.dtype == "f16" ? "float16" : "bfloat16";

  // Weights scaled by 1/sqrt(fan_in) keep activations O(1) so logits are well separated; norm
  // weights around 1 make a wrong normalisation visible in tests.
  at::manual_seed(options.seed);
  auto matrix = [](int64_t rows, int64_t cols) {
    return at::randn({rows, cols}) / std::sqrt(static_cast<double>(cols));
  };
  auto norm = [](int64_t n) { return 1.0 + 0.1 * at::randn({n}); };
  const int64_t h = c.hidden_size, q_dim = c.num_attention_heads * c.head_dim,
                kv_dim = c.num_key_value_heads * c.head_dim, inter = c.intermediate_size;
  Weights w;
  w.embed = at::randn({c.vocab_size, h});
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    LayerWeights lw;
    lw.input_norm = norm(h);
    lw.q_proj = matrix(q_dim, h);
    lw.k_proj = matrix(kv_dim, h);
    lw.v_proj = matrix(kv_dim, h);
    lw.o_proj = matrix(h, q_dim);
    lw.post_norm = norm(h);
    lw.gate_proj = matrix(inter, h);
    lw.up_proj = matrix(inter, h);
    lw.down_proj = matrix(h, inter);
    if (c.qkv_bias) {  // biases of the activations' size, so that a missing one shows
      lw.q_bias = 0.5 * at::randn({q_dim});
      lw.k_bias = 0.5 * at::randn({kv_dim});
      lw.v_bias = 0.5 * at::randn({kv_dim});
    }
    if (c.qk_norm) {
      lw.q_norm = norm(c.head_dim);
      lw.k_norm = norm(c.head_dim);
    }
    w.layers.push_back(std::move(lw));
  }
  w.norm = norm(h);
  w.lm_head = c.tie_word_embeddings ? w.embed : matrix(c.vocab_size, h);

  save_weights(out_dir, c, w, options.dtype, options.max_shard_bytes);
  std::ofstream(fs::path(out_dir) / "config.json") << config_to_json(c);
  // A tokenizer.json keeps its name (the tokenizer_config.json naming its roles goes beside it).
  const bool hf_json = fs::path(tokenizer_file).extension() == ".json";
  const fs::path tokenizer_dest =
      fs::path(out_dir) / (hf_json ? "tokenizer.json" : "tokenizer.model");
  if (!tokenizer_file.empty() &&
      !(fs::exists(tokenizer_dest) && fs::equivalent(tokenizer_file, tokenizer_dest)))
    fs::copy_file(tokenizer_file, tokenizer_dest, fs::copy_options::overwrite_existing);
  return c;
}

}  // namespace kvs::model
