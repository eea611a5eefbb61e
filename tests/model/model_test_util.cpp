#include "model/model_test_util.h"

#include <ATen/TensorOperators.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "model/runtime.h"

namespace kvs::test {

namespace fs = std::filesystem;

std::string make_checkpoint(const std::string& dir, const std::string& preset, uint64_t seed,
                            int64_t sliding_window, const std::string& dtype,
                            int64_t max_shard_bytes) {
  kvs::model::MakeModelOptions options;
  options.preset = preset;
  options.seed = seed;
  options.sliding_window = sliding_window;
  options.dtype = dtype;
  options.max_shard_bytes = max_shard_bytes;
  kvs::model::make_random_model(dir, options);
  return dir;
}

kvs::model::Transformer load_f32(const std::string& dir) {
  kvs::model::set_cpu_threads(2);
  kvs::model::LoadOptions options;
  options.device = "cpu";
  options.dtype = "f32";
  return kvs::model::Transformer::load(dir, options);
}

std::vector<int32_t> random_ids(int64_t count, int64_t vocab, uint64_t seed, int64_t first_id) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ids;
  const uint64_t span = static_cast<uint64_t>(vocab - first_id);
  for (int64_t i = 0; i < count; ++i) ids.push_back(static_cast<int32_t>(first_id + rng() % span));
  return ids;
}

std::vector<int64_t> widen(const std::vector<int32_t>& ids) {
  return std::vector<int64_t>(ids.begin(), ids.end());
}

std::vector<std::vector<float>> to_rows(const at::Tensor& logits) {
  const at::Tensor t = logits.to(at::kCPU, at::kFloat).contiguous();
  EXPECT_EQ(t.dim(), 2);
  std::vector<std::vector<float>> rows;
  const float* p = t.data_ptr<float>();
  for (int64_t r = 0; r < t.size(0); ++r)
    rows.emplace_back(p + r * t.size(1), p + (r + 1) * t.size(1));
  return rows;
}

double max_abs_diff(const std::vector<std::vector<float>>& a,
                    const std::vector<std::vector<float>>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t r = 0; r < std::min(a.size(), b.size()); ++r) {
    EXPECT_EQ(a[r].size(), b[r].size()) << "row " << r;
    for (size_t i = 0; i < std::min(a[r].size(), b[r].size()); ++i)
      worst = std::max(worst, static_cast<double>(std::abs(a[r][i] - b[r][i])));
  }
  return worst;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  if (!a.sizes().equals(b.sizes())) return INFINITY;
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

double top2_gap(const std::vector<float>& row) {
  float best = -INFINITY, second = -INFINITY;
  for (float v : row) {
    if (v > best) {
      second = best;
      best = v;
    } else if (v > second) {
      second = v;
    }
  }
  return static_cast<double>(best) - static_cast<double>(second);
}

}  // namespace kvs::test
