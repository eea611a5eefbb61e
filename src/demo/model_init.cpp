#include "demo/model_init.h"

#include <cmath>

#include "core/error.h"

namespace kvs::demo {

model::ModelConfig demo_model_config(const ModelShape& shape, int64_t vocab_size, int64_t bos_id,
                                     int64_t eos_id) {
  if (shape.layers < 1 || shape.hidden < 1 || shape.heads < 1 || shape.kv_heads < 1 ||
      shape.head_dim < 1 || shape.intermediate < 1)
    throw Error("demo model: every dimension must be positive");
  if (shape.head_dim % 2 != 0) throw Error("demo model: head_dim must be even (RoPE rotates pairs)");
  if (!(shape.rope_theta > 1)) throw Error("demo model: rope_theta must be above 1");
  if (shape.heads % shape.kv_heads != 0)
    throw Error("demo model: heads must be a multiple of kv_heads (GQA groups)");
  model::ModelConfig c;
  c.model_type = "mistral";
  c.vocab_size = vocab_size;
  c.hidden_size = shape.hidden;
  c.intermediate_size = shape.intermediate;
  c.num_hidden_layers = shape.layers;
  c.num_attention_heads = shape.heads;
  c.num_key_value_heads = shape.kv_heads;
  c.head_dim = shape.head_dim;
  c.max_position_embeddings = shape.max_positions;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = shape.rope_theta;
  c.tie_word_embeddings = false;
  c.bos_token_id = bos_id;
  c.eos_token_ids = {eos_id};
  c.torch_dtype = "float32";
  return c;
}

model::Weights init_weights(const model::ModelConfig& c, uint64_t seed) {
  at::manual_seed(seed);
  // Matrices as PyTorch's nn.Linear draws them (std 1/sqrt(3 fan_in)) and embeddings as
  // nn.Embedding (std 1). GPT-2's std 0.02 leaves a model this narrow with near-uniform attention
  // and the copying it must learn stalls on a plateau (data/demo/README.md).
  auto matrix = [](int64_t rows, int64_t cols) {
    return (at::randn({rows, cols}) / std::sqrt(3.0 * static_cast<double>(cols))).requires_grad_(true);
  };
  auto ones = [](int64_t n) { return at::ones({n}).requires_grad_(true); };
  const int64_t h = c.hidden_size, q_dim = c.num_attention_heads * c.head_dim,
                kv_dim = c.num_key_value_heads * c.head_dim, inter = c.intermediate_size;
  model::Weights w;
  w.embed = at::randn({c.vocab_size, h}).requires_grad_(true);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    model::LayerWeights lw;
    lw.input_norm = ones(h);
    lw.q_proj = matrix(q_dim, h);
    lw.k_proj = matrix(kv_dim, h);
    lw.v_proj = matrix(kv_dim, h);
    lw.o_proj = matrix(h, q_dim);
    lw.post_norm = ones(h);
    lw.gate_proj = matrix(inter, h);
    lw.up_proj = matrix(inter, h);
    lw.down_proj = matrix(h, inter);
    w.layers.push_back(std::move(lw));
  }
  w.norm = ones(h);
  w.lm_head = matrix(c.vocab_size, h);
  return w;
}

std::vector<at::Tensor> decayed_parameters(const model::Weights& w) {
  std::vector<at::Tensor> params;
  for (const auto& lw : w.layers)
    for (const auto* t : {&lw.q_proj, &lw.k_proj, &lw.v_proj, &lw.o_proj, &lw.gate_proj,
                          &lw.up_proj, &lw.down_proj})
      params.push_back(*t);
  params.push_back(w.lm_head);
  return params;
}

std::vector<at::Tensor> undecayed_parameters(const model::Weights& w) {
  std::vector<at::Tensor> params{w.embed, w.norm};
  for (const auto& lw : w.layers) {
    params.push_back(lw.input_norm);
    params.push_back(lw.post_norm);
  }
  return params;
}

}  // namespace kvs::demo
