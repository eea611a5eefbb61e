// A deliberately naive Mistral / Llama forward pass for tests: plain loops over std::vector,
// one position at a time, everything accumulated in double. It reads config.json with
// nlohmann::json and the tensors with kvs::SafetensorsFile itself and shares no code with
// src/model, so that it is an independent reference for the runner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::test {

struct NaiveConfig {
  std::string model_type;
  int64_t vocab = 0, hidden = 0, intermediate = 0, layers = 0, heads = 0, kv_heads = 0,
          head_dim = 0;
  double eps = 0, theta = 0;
  int64_t sliding_window = 0;  // 0: full attention
  bool tied = false;
  bool llama3 = false;  // rope_scaling llama3
  double factor = 0, low_freq_factor = 0, high_freq_factor = 0, original_max = 0;
};

NaiveConfig read_naive_config(const std::string& model_dir);

class NaiveModel {
 public:
  // Switches exist only so tests can show the reference is sensitive to the feature.
  struct Options {
    bool ignore_sliding_window = false;
    bool ignore_rope_scaling = false;
  };

  explicit NaiveModel(const std::string& model_dir) : NaiveModel(model_dir, Options{}) {}
  NaiveModel(const std::string& model_dir, const Options& options);

  const NaiveConfig& config() const { return config_; }

  // Feeds one token at the next position; returns the logits [vocab] predicting the next token.
  std::vector<float> step(int64_t token);
  int64_t position() const { return position_; }

  // Feeds every token in turn; returns one logit row per token.
  std::vector<std::vector<float>> run(const std::vector<int64_t>& tokens);

 private:
  struct Layer {
    std::vector<float> input_norm, q, k, v, o, post_norm, gate, up, down;
  };

  std::vector<double> rope_inverse_frequencies() const;
  void rotate(double* x, int64_t position) const;  // in place, one head [head_dim]

  NaiveConfig config_;
  Options options_;
  std::vector<float> embed_, norm_, lm_head_;
  std::vector<Layer> layers_;
  std::vector<double> inv_freq_;
  // keys_[layer][position] = [kv_heads * head_dim], after RoPE; values_ likewise.
  std::vector<std::vector<std::vector<double>>> keys_, values_;
  int64_t position_ = 0;
};

int64_t argmax(const std::vector<float>& row);

}  // namespace kvs::test
