// `kvsearch bench select`: the cost of eviction for one prompt on synthetic tensors of a given
// size, per prompt (summed over the layers): window statistics, top-k selection (PyramidKV),
// greedy diverse selection (the Global policy on the pyramid schedule), and the complete eviction
// step (statistics + selection + gather + cache assembly, through CompressingObserver) of each.
// Every repeat times all of them back to back with an sgemm probe (the two complete steps in
// alternating order), so machine load moves all of a repeat's figures together: each figure is
// the median over the repeats with its spread, the diverse / baseline ratio the median of the
// repeats' own ratios, and the statistics' compute floor (their products' FLOPs at the sgemm
// rate of the same repeat) their ideal time.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "bench/bench_probes.h"

namespace kvs::bench {

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
  std::string method;          // a registered method, timed beside SnapKV (both at --budget)
};

struct SelectBenchResult {
  SelectBenchOptions options;
  int threads = 0;
  Spread window_stats_ms;
  Spread topk_select_ms;    // score + top-k, all layers
  Spread greedy_select_ms;  // score + candidates + greedy admission, all layers
  Spread baseline_step_ms;  // complete eviction step, PyramidKV
  Spread diverse_step_ms;   // complete eviction step, Global
  Spread diverse_over_baseline;
  double window_stats_gflop = 0;  // their products' floating-point work, all layers
  Spread sgemm_gflops;            // the probe: the best of a square and the statistics' shape
  Spread window_stats_over_floor;
  // --method: its complete step and SnapKV's (uniform budgets), timed in alternating order.
  Spread method_step_ms, snapkv_step_ms, method_over_snapkv;
};

SelectBenchResult run_select_bench(const SelectBenchOptions& options);
nlohmann::json select_bench_to_json(const SelectBenchResult& result);

// Writes the bench's inputs for `kvsearch select` (the same tensors every layer reads) to dir:
// tensors.safetensors (q_window, keys), baseline.json and diverse.json (the two policies), so
// that the kept sets of two builds can be compared layer by layer (tools/bench_select_check.sh).
void save_select_bench_inputs(const SelectBenchOptions& options, const std::string& dir);

}  // namespace kvs::bench
