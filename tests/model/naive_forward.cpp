#include "model/naive_forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "core/safetensors.h"

namespace kvs::test {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("naive: cannot open " + path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return json::parse(buffer.str());
}

// Every tensor of the checkpoint (single file or shards), as float32 vectors.
class TensorSource {
 public:
  explicit TensorSource(const fs::path& dir) {
    const fs::path index = dir / "model.safetensors.index.json";
    std::vector<std::string> files;
    if (fs::exists(index)) {
      std::map<std::string, bool> seen;
      for (const auto& [name, file] : read_json(index).at("weight_map").items())
        if (!seen[file.get<std::string>()]) {
          seen[file.get<std::string>()] = true;
          files.push_back(file.get<std::string>());
        }
    } else {
      files.push_back("model.safetensors");
    }
    for (const auto& f : files) files_.push_back(std::make_unique<SafetensorsFile>((dir / f).string()));
  }

  std::vector<float> get(const std::string& name, const std::vector<int64_t>& shape) const {
    for (const auto& file : files_) {
      const TensorEntry* e = file->find(name);
      if (!e) continue;
      if (e->shape != shape) throw std::runtime_error("naive: unexpected shape for " + name);
      const size_t n = static_cast<size_t>(e->numel());
      std::vector<float> out(n);
      const uint8_t* p = file->data(*e);
      for (size_t i = 0; i < n; ++i) {
        if (e->dtype == DType::F32) {
          float f;
          std::memcpy(&f, p + 4 * i, 4);
          out[i] = f;
        } else {
          uint16_t h;
          std::memcpy(&h, p + 2 * i, 2);
          if (e->dtype == DType::F16) out[i] = half_to_float(h);
          else if (e->dtype == DType::BF16) out[i] = bf16_to_float(h);
          else throw std::runtime_error("naive: unsupported dtype for " + name);
        }
      }
      return out;
    }
    throw std::runtime_error("naive: no tensor " + name);
  }

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
};

// y = W x for W stored [rows, cols] row-major (a torch Linear weight).
std::vector<double> matvec(const std::vector<float>& w, int64_t rows, int64_t cols,
                           const std::vector<double>& x) {
  std::vector<double> y(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 0;
    for (int64_t c = 0; c < cols; ++c) acc += static_cast<double>(w[r * cols + c]) * x[c];
    y[r] = acc;
  }
  return y;
}

std::vector<double> rms_norm(const std::vector<double>& x, const std::vector<float>& weight,
                             double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * weight[i];
  return y;
}

}  // namespace

NaiveConfig read_naive_config(const std::string& model_dir) {
  const json j = read_json(fs::path(model_dir) / "config.json");
  NaiveConfig c;
  c.model_type = j.at("model_type").get<std::string>();
  c.vocab = j.at("vocab_size").get<int64_t>();
  c.hidden = j.at("hidden_size").get<int64_t>();
  c.intermediate = j.at("intermediate_size").get<int64_t>();
  c.layers = j.at("num_hidden_layers").get<int64_t>();
  c.heads = j.at("num_attention_heads").get<int64_t>();
  c.kv_heads = j.at("num_key_value_heads").get<int64_t>();
  c.head_dim = j.contains("head_dim") && !j["head_dim"].is_null() ? j["head_dim"].get<int64_t>()
                                                                  : c.hidden / c.heads;
  c.eps = j.at("rms_norm_eps").get<double>();
  c.theta = j.at("rope_theta").get<double>();
  if (j.contains("sliding_window") && !j["sliding_window"].is_null())
    c.sliding_window = j["sliding_window"].get<int64_t>();
  c.tied = j.at("tie_word_embeddings").get<bool>();
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
    const json& s = j["rope_scaling"];
    const std::string type = s.contains("rope_type") ? s["rope_type"].get<std::string>()
                                                     : s.at("type").get<std::string>();
    if (type != "llama3") throw std::runtime_error("naive: unsupported rope_scaling " + type);
    c.llama3 = true;
    c.factor = s.at("factor").get<double>();
    c.low_freq_factor = s.at("low_freq_factor").get<double>();
    c.high_freq_factor = s.at("high_freq_factor").get<double>();
    c.original_max = s.at("original_max_position_embeddings").get<double>();
  }
  return c;
}

NaiveModel::NaiveModel(const std::string& model_dir, const Options& options)
    : config_(read_naive_config(model_dir)), options_(options) {
  const NaiveConfig& c = config_;
  const TensorSource src(model_dir);
  const int64_t qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
  embed_ = src.get("model.embed_tokens.weight", {c.vocab, c.hidden});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    Layer L;
    L.input_norm = src.get(p + "input_layernorm.weight", {c.hidden});
    L.q = src.get(p + "self_attn.q_proj.weight", {qd, c.hidden});
    L.k = src.get(p + "self_attn.k_proj.weight", {kvd, c.hidden});
    L.v = src.get(p + "self_attn.v_proj.weight", {kvd, c.hidden});
    L.o = src.get(p + "self_attn.o_proj.weight", {c.hidden, qd});
    L.post_norm = src.get(p + "post_attention_layernorm.weight", {c.hidden});
    L.gate = src.get(p + "mlp.gate_proj.weight", {c.intermediate, c.hidden});
    L.up = src.get(p + "mlp.up_proj.weight", {c.intermediate, c.hidden});
    L.down = src.get(p + "mlp.down_proj.weight", {c.hidden, c.intermediate});
    layers_.push_back(std::move(L));
  }
  norm_ = src.get("model.norm.weight", {c.hidden});
  lm_head_ = c.tied ? embed_ : src.get("lm_head.weight", {c.vocab, c.hidden});
  inv_freq_ = rope_inverse_frequencies();
  keys_.resize(static_cast<size_t>(c.layers));
  values_.resize(static_cast<size_t>(c.layers));
}

std::vector<double> NaiveModel::rope_inverse_frequencies() const {
  const NaiveConfig& c = config_;
  std::vector<double> inv(static_cast<size_t>(c.head_dim / 2));
  const double pi = std::acos(-1.0);
  for (int64_t i = 0; i < c.head_dim / 2; ++i) {
    double f = 1.0 / std::pow(c.theta, static_cast<double>(2 * i) / static_cast<double>(c.head_dim));
    if (c.llama3 && !options_.ignore_rope_scaling) {
      // Wavelengths shorter than original/high_freq_factor keep their frequency, longer than
      // original/low_freq_factor are slowed by `factor`, and the band between is interpolated.
      const double wavelength = 2 * pi / f;
      const double short_limit = c.original_max / c.high_freq_factor;
      const double long_limit = c.original_max / c.low_freq_factor;
      if (wavelength < short_limit) {
        // unchanged
      } else if (wavelength > long_limit) {
        f = f / c.factor;
      } else {
        const double t = (c.original_max / wavelength - c.low_freq_factor) /
                         (c.high_freq_factor - c.low_freq_factor);
        f = (1 - t) * f / c.factor + t * f;
      }
    }
    inv[static_cast<size_t>(i)] = f;
  }
  return inv;
}

void NaiveModel::rotate(double* x, int64_t position) const {
  const int64_t half = config_.head_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(position) * inv_freq_[static_cast<size_t>(i)];
    const double a = x[i], b = x[i + half];
    x[i] = a * std::cos(angle) - b * std::sin(angle);
    x[i + half] = b * std::cos(angle) + a * std::sin(angle);
  }
}

std::vector<float> NaiveModel::step(int64_t token) {
  const NaiveConfig& c = config_;
  if (token < 0 || token >= c.vocab) throw std::runtime_error("naive: token out of range");
  const int64_t pos = position_++;
  const int64_t d = c.head_dim, group = c.heads / c.kv_heads;
  std::vector<double> x(static_cast<size_t>(c.hidden));
  for (int64_t i = 0; i < c.hidden; ++i) x[i] = embed_[token * c.hidden + i];

  for (int64_t l = 0; l < c.layers; ++l) {
    const Layer& L = layers_[static_cast<size_t>(l)];
    const std::vector<double> h = rms_norm(x, L.input_norm, c.eps);
    std::vector<double> q = matvec(L.q, c.heads * d, c.hidden, h);
    std::vector<double> k = matvec(L.k, c.kv_heads * d, c.hidden, h);
    const std::vector<double> v = matvec(L.v, c.kv_heads * d, c.hidden, h);
    for (int64_t hh = 0; hh < c.heads; ++hh) rotate(&q[hh * d], pos);
    for (int64_t hh = 0; hh < c.kv_heads; ++hh) rotate(&k[hh * d], pos);
    keys_[l].push_back(k);
    values_[l].push_back(v);

    // Causal attention over every earlier position (and this one), limited by the window.
    int64_t first = 0;
    if (c.sliding_window > 0 && !options_.ignore_sliding_window)
      first = std::max<int64_t>(0, pos - c.sliding_window + 1);
    std::vector<double> attn(static_cast<size_t>(c.heads * d), 0.0);
    for (int64_t hh = 0; hh < c.heads; ++hh) {
      const int64_t kvh = hh / group;
      std::vector<double> scores;
      double top = -INFINITY;
      for (int64_t j = first; j <= pos; ++j) {
        double s = 0;
        for (int64_t e = 0; e < d; ++e) s += q[hh * d + e] * keys_[l][j][kvh * d + e];
        s /= std::sqrt(static_cast<double>(d));
        scores.push_back(s);
        top = std::max(top, s);
      }
      double total = 0;
      for (double& s : scores) {
        s = std::exp(s - top);
        total += s;
      }
      for (int64_t j = first; j <= pos; ++j) {
        const double p = scores[static_cast<size_t>(j - first)] / total;
        for (int64_t e = 0; e < d; ++e) attn[hh * d + e] += p * values_[l][j][kvh * d + e];
      }
    }
    const std::vector<double> o = matvec(L.o, c.hidden, c.heads * d, attn);
    for (int64_t i = 0; i < c.hidden; ++i) x[i] += o[i];

    const std::vector<double> h2 = rms_norm(x, L.post_norm, c.eps);
    const std::vector<double> g = matvec(L.gate, c.intermediate, c.hidden, h2);
    const std::vector<double> u = matvec(L.up, c.intermediate, c.hidden, h2);
    std::vector<double> act(static_cast<size_t>(c.intermediate));
    for (int64_t i = 0; i < c.intermediate; ++i) act[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
    const std::vector<double> down = matvec(L.down, c.hidden, c.intermediate, act);
    for (int64_t i = 0; i < c.hidden; ++i) x[i] += down[i];
  }
  const std::vector<double> logits = matvec(lm_head_, c.vocab, c.hidden, rms_norm(x, norm_, c.eps));
  return std::vector<float>(logits.begin(), logits.end());
}

std::vector<std::vector<float>> NaiveModel::run(const std::vector<int64_t>& tokens) {
  std::vector<std::vector<float>> rows;
  for (int64_t t : tokens) rows.push_back(step(t));
  return rows;
}

int64_t argmax(const std::vector<float>& row) {
  int64_t best = 0;
  for (size_t i = 1; i < row.size(); ++i)
    if (row[i] > row[static_cast<size_t>(best)]) best = static_cast<int64_t>(i);
  return best;
}

}  // namespace kvs::test
