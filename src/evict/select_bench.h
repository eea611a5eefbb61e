// `kvsearch bench select`: the cost of eviction for one prompt on synthetic tensors of a given
// size, per prompt (summed over the layers): window statistics, top-k selection (PyramidKV),
// greedy diverse selection (the Global policy on the pyramid schedule), and the complete eviction
// step (statistics + selection + gather + cache assembly, through CompressingObserver) of each.
// Every figure is the best of `repeats` runs, which keeps other load on the machine out of it.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace kvs::evict {

struct SelectBenchOptions {
  int64_t tokens = 15600;  // the paper's mean HotpotQA prompt
  int64_t layers = 32;
  int64_t heads = 32;
  int64_t kv_heads = 8;
  int64_t head_dim = 128;
  int64_t budget = 64;
  int64_t window = 8;
  double lambda1 = 0.0;  // the diverse policy: Global, the paper's default setting
  double lambda2 = -0.15;
  int64_t repeats = 5;
  uint64_t seed = 0;
  std::string device = "cpu";  // cpu | cuda
};

struct SelectBenchResult {
  SelectBenchOptions options;
  int threads = 0;
  double window_stats_ms = 0;
  double topk_select_ms = 0;    // score + top-k, all layers
  double greedy_select_ms = 0;  // score + candidates + greedy admission, all layers
  double baseline_step_ms = 0;  // complete eviction step, PyramidKV
  double diverse_step_ms = 0;   // complete eviction step, Global
  double diverse_over_baseline() const { return diverse_step_ms / baseline_step_ms; }
};

SelectBenchResult run_select_bench(const SelectBenchOptions& options);
nlohmann::json select_bench_to_json(const SelectBenchResult& result);

}  // namespace kvs::evict
