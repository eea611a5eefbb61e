// A sharded checkpoint (model.safetensors.index.json + >= 3 shards, stored in bf16 or f16) loads
// and equals the f32 checkpoint of the same seed within the storage dtype's rounding: every
// weight equals the f32 weight rounded to that dtype, and the logits equal those of the f32
// model with its weights rounded the same way.
#include <ATen/ops/equal.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/safetensors.h"
#include "model/model_test_util.h"

namespace kvs::test {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string dtype;
  int64_t max_shard_bytes;
  double logit_bound;  // how far rounding the weights may move the logits
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.dtype; }

at::ScalarType scalar_of(const std::string& dtype) {
  return dtype == "bf16" ? at::kBFloat16 : at::kHalf;
}

std::vector<std::pair<std::string, at::Tensor>> flatten(const kvs::model::Weights& w) {
  std::vector<std::pair<std::string, at::Tensor>> out = {{"embed", w.embed}};
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const auto& L = w.layers[l];
    const std::string p = "layer" + std::to_string(l) + ".";
    for (const auto& [name, t] : std::vector<std::pair<std::string, at::Tensor>>{
             {"input_norm", L.input_norm}, {"q", L.q_proj}, {"k", L.k_proj}, {"v", L.v_proj},
             {"o", L.o_proj}, {"post_norm", L.post_norm}, {"gate", L.gate_proj},
             {"up", L.up_proj}, {"down", L.down_proj}})
      out.emplace_back(p + name, t);
  }
  out.emplace_back("norm", w.norm);
  out.emplace_back("lm_head", w.lm_head);
  return out;
}

kvs::model::Weights rounded(const kvs::model::Weights& w, at::ScalarType dtype) {
  auto r = [dtype](const at::Tensor& t) { return t.to(dtype).to(at::kFloat); };
  kvs::model::Weights out;
  out.embed = r(w.embed);
  for (const auto& L : w.layers) {
    kvs::model::LayerWeights l;  // the tiny preset's tensors, rounded: no blocks, biases or norms
    for (auto [to, from] : {std::pair{&l.input_norm, &L.input_norm},
                            {&l.q_proj, &L.q_proj},
                            {&l.k_proj, &L.k_proj},
                            {&l.v_proj, &L.v_proj},
                            {&l.o_proj, &L.o_proj},
                            {&l.post_norm, &L.post_norm},
                            {&l.gate_proj, &L.gate_proj},
                            {&l.up_proj, &L.up_proj},
                            {&l.down_proj, &L.down_proj}})
      *to = r(*from);
    out.layers.push_back(std::move(l));
  }
  out.norm = r(w.norm);
  out.lm_head = r(w.lm_head);
  return out;
}

class ShardedCheckpoint : public ::testing::TestWithParam<Case> {};

TEST_P(ShardedCheckpoint, LoadsAndEqualsTheF32ModelWithinRounding) {
  const Case& c = GetParam();
  ScratchDir scratch("sharded_" + c.dtype);
  const std::string f32_dir = make_checkpoint(scratch.file("f32"), "tiny", 5);
  const std::string dir =
      make_checkpoint(scratch.file(c.dtype), "tiny", 5, 0, c.dtype, c.max_shard_bytes);

  // The layout: an index, no single file, >= 3 shards that together hold every tensor once.
  ASSERT_TRUE(fs::exists(fs::path(dir) / "model.safetensors.index.json"));
  EXPECT_FALSE(fs::exists(fs::path(dir) / "model.safetensors"));
  std::ifstream in(fs::path(dir) / "model.safetensors.index.json");
  const auto index = nlohmann::json::parse(in);
  std::set<std::string> shard_files;
  std::map<std::string, std::set<std::string>> layer_files;
  for (const auto& [name, file] : index.at("weight_map").items()) {
    shard_files.insert(file.get<std::string>());
    if (name.rfind("model.layers.", 0) == 0)
      layer_files[name.substr(0, name.find('.', 13))].insert(file.get<std::string>());
  }
  std::cout << "[measured] " << c.dtype << ": " << shard_files.size() << " shards\n";
  EXPECT_GE(shard_files.size(), 3u);
  EXPECT_EQ(index.at("weight_map").size(), 2u + 9u * 2u + 1u);  // embed, 2 layers, norm, lm_head
  uint64_t stored_bytes = 0;
  for (const auto& file : shard_files) {
    const kvs::SafetensorsFile st((fs::path(dir) / file).string());
    for (const auto& t : st.tensors()) {
      EXPECT_EQ(t.dtype, c.dtype == "bf16" ? kvs::DType::BF16 : kvs::DType::F16) << t.name;
      EXPECT_EQ(index["weight_map"][t.name], file) << t.name;
      stored_bytes += t.end - t.begin;
    }
  }
  EXPECT_EQ(index.at("metadata").at("total_size").get<uint64_t>(), stored_bytes);
  if (c.max_shard_bytes < (1 << 16)) {
    bool spans = false;
    for (const auto& [layer, files] : layer_files) spans = spans || files.size() > 1;
    EXPECT_TRUE(spans) << "small shards should split some layer across two files";
  }

  // Every weight is exactly the f32 weight rounded to the storage dtype.
  const auto config = kvs::model::load_config((fs::path(dir) / "config.json").string());
  const auto f32_weights = kvs::model::load_weights(f32_dir, config, at::kCPU, at::kFloat);
  const auto sharded_weights = kvs::model::load_weights(dir, config, at::kCPU, at::kFloat);
  const auto expected = rounded(f32_weights, scalar_of(c.dtype));
  const auto got = flatten(sharded_weights), want = flatten(expected), raw = flatten(f32_weights);
  ASSERT_EQ(got.size(), want.size());
  bool any_rounding = false;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(at::equal(got[i].second, want[i].second)) << got[i].first;
    any_rounding = any_rounding || !at::equal(got[i].second, raw[i].second);
  }
  EXPECT_TRUE(any_rounding) << "the stored dtype should have rounded something";

  // The loaded model computes what the f32 model computes with rounded weights.
  const auto prompt = random_ids(19, config.vocab_size, 3);
  kvs::model::PrefillOptions options;
  options.all_logits = true;
  options.keep_cache = false;
  const auto loaded = load_f32(dir);
  const kvs::model::Transformer reference(config, expected);
  const auto f32_model = load_f32(f32_dir);
  const at::Tensor logits = loaded.prefill(prompt, options).logits;
  const double same = max_abs_diff(logits, reference.prefill(prompt, options).logits);
  const double rounding = max_abs_diff(logits, f32_model.prefill(prompt, options).logits);
  std::cout << "[measured] " << c.dtype << ": vs rounded f32 " << same << ", vs f32 " << rounding
            << "\n";
  EXPECT_LE(same, 1e-5);
  EXPECT_LE(rounding, c.logit_bound);
}

INSTANTIATE_TEST_SUITE_P(Stored, ShardedCheckpoint,
                         ::testing::Values(Case{"bf16", 1 << 20, 0.25}, Case{"f16", 48 << 10, 0.03}),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.dtype; });

}  // namespace
}  // namespace kvs::test
