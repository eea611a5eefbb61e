#include "bench/select_bench.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "core/safetensors.h"
#include "core/timer.h"
#include "evict/compressed_cache.h"
#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "evict/window_stats.h"

namespace kvs::bench {

// The selection benchmark speaks the eviction module's vocabulary (policies, statistics).
using namespace evict;

namespace {

// Milliseconds of fn(), device work included.
double time_ms(const at::Device& device, const std::function<void()>& fn) {
  synchronize_device(device);
  const Timer timer;
  fn();
  synchronize_device(device);
  return timer.seconds() * 1e3;
}

void check_options(const SelectBenchOptions& o) {
  const auto positive = [](int64_t v, const char* name) {
    if (v < 1) throw error_at(name, strfmt("must be >= 1, got %lld", (long long)v));
  };
  positive(o.tokens, "--tokens");
  positive(o.layers, "--layers");
  positive(o.heads, "--heads");
  positive(o.kv_heads, "--kv-heads");
  positive(o.head_dim, "--head-dim");
  positive(o.repeats, "--repeats");
  if (o.heads % o.kv_heads != 0) throw error_at("--heads", "must be a multiple of --kv-heads");
  if (o.tokens < o.budget) {
    throw error_at("--tokens", "must be at least --budget, else nothing is evicted");
  }
}

struct BenchPolicies {
  Policy baseline, diverse;
};

BenchPolicies bench_policies(const SelectBenchOptions& options) {
  BenchPolicies p{pyramidkv_policy(options.budget),
                  global_policy(options.budget, options.lambda1, options.lambda2)};
  p.baseline.budget.window = p.diverse.budget.window = options.window;
  p.baseline.validate("baseline policy");
  p.diverse.validate("diverse policy");
  return p;
}

// One layer's tensors, reused for every layer: the budgets and coefficients still vary by layer.
struct BenchTensors {
  at::Tensor queries, keys, values;
};

BenchTensors bench_tensors(const SelectBenchOptions& options, const at::Device& device) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  const auto randn = [&](at::IntArrayRef shape) {
    return at::randn(shape, generator, at::TensorOptions().dtype(at::kFloat)).to(device);
  };
  BenchTensors t;
  t.queries = randn({options.heads, options.window, options.head_dim});
  t.keys = randn({options.kv_heads, options.tokens, options.head_dim});
  t.values = randn({options.kv_heads, options.tokens, options.head_dim});
  return t;
}

}  // namespace

SelectBenchResult run_select_bench(const SelectBenchOptions& options) {
  check_options(options);
  const BenchPolicies policies = bench_policies(options);
  const Policy& baseline = policies.baseline;
  const Policy& diverse = policies.diverse;
  const at::Device device(options.device == "cuda" ? at::kCUDA : at::kCPU);
  const BenchTensors t = bench_tensors(options, device);
  const int64_t L = options.layers;
  const LayerBudgets budgets = layer_budgets(baseline.budget, options.tokens, L);
  const int64_t group_rows = options.heads / options.kv_heads * options.window;

  // Two policies' complete steps, layer by layer in alternating order: a drift in the machine's
  // load lasts longer than one layer's step and so weighs on both (the ratio's spread between runs
  // came from timing each whole step separately). Returns their times in ms.
  const auto alternating_steps = [&](const Policy& first, const Policy& second, int64_t rep) {
    CompressingObserver a({first}, L, /*decode_capacity=*/32);
    CompressingObserver b({second}, L, /*decode_capacity=*/32);
    double a_ms = 0, b_ms = 0;
    for (int64_t l = 0; l <= L; ++l) {  // l == L: the caches are taken
      const auto step = [&](CompressingObserver& observer) {
        return time_ms(device, [&] {
          if (l < L)
            observer.on_layer(model::PrefillLayer{l, t.keys, t.values, t.queries});
          else
            observer.take_cache();
        });
      };
      if ((l + rep) % 2 == 0) {
        a_ms += step(a);
        b_ms += step(b);
      } else {
        b_ms += step(b);
        a_ms += step(a);
      }
    }
    return std::pair{a_ms, b_ms};
  };
  // Every layer's statistics are the same (so are its tensors): one copy serves them all.
  const auto select_all = [&](const WindowStats& stats, const Policy& policy) {
    for (int64_t l = 0; l < L; ++l)
      select_tokens(stats, t.keys, policy, budgets.selected[static_cast<size_t>(l)], l, L);
  };

  // --method: that method's policy and SnapKV's on uniform budgets, at the same budget and window.
  std::optional<Policy> method;
  Policy snapkv = snapkv_policy(options.budget);
  snapkv.budget.window = options.window;
  if (!options.method.empty()) {
    method = policy_from_json(
        nlohmann::json{{"method", options.method}, {"budget", options.budget}}, "--method");
  }

  SelectBenchResult r;
  r.options = options;
  r.threads = at::get_num_threads();
  // Q K^T of every layer: [kv_heads] x [group * W, d] @ [d, n].
  r.window_stats_gflop = 2.0 * L * options.heads * options.window * options.head_dim *
                         static_cast<double>(options.tokens) / 1e9;
  std::vector<double> stats_ms, topk_ms, greedy_ms, baseline_ms, diverse_ms, ratio, sgemm, floor;
  std::vector<double> method_ms, snapkv_ms, method_ratio;
  for (int64_t rep = 0; rep < options.repeats; ++rep) {
    const double rate = std::max(gemm_gflops(device, at::kFloat, 1, 1024, 1024, 1024),
                                 gemm_gflops(device, at::kFloat, options.kv_heads, group_rows,
                                             options.head_dim, options.tokens));
    // One layer's statistics alive at a time, as in the observer: each layer's replace the last.
    WindowStats stats;
    stats_ms.push_back(time_ms(device, [&] {
      for (int64_t l = 0; l < L; ++l) stats = compute_window_stats(t.queries, t.keys);
    }));
    topk_ms.push_back(time_ms(device, [&] { select_all(stats, baseline); }));
    greedy_ms.push_back(time_ms(device, [&] { select_all(stats, diverse); }));
    const auto [base, div] = alternating_steps(baseline, diverse, rep);
    baseline_ms.push_back(base);
    diverse_ms.push_back(div);
    ratio.push_back(div / base);
    if (method) {
      const auto [m, s] = alternating_steps(*method, snapkv, rep);
      method_ms.push_back(m);
      snapkv_ms.push_back(s);
      method_ratio.push_back(m / s);
    }
    sgemm.push_back(rate);
    floor.push_back(stats_ms.back() / (r.window_stats_gflop / rate * 1e3));
  }
  r.window_stats_ms = spread_of(stats_ms);
  r.topk_select_ms = spread_of(topk_ms);
  r.greedy_select_ms = spread_of(greedy_ms);
  r.baseline_step_ms = spread_of(baseline_ms);
  r.diverse_step_ms = spread_of(diverse_ms);
  r.diverse_over_baseline = spread_of(ratio);
  r.sgemm_gflops = spread_of(sgemm);
  r.window_stats_over_floor = spread_of(floor);
  if (method) {
    r.method_step_ms = spread_of(method_ms);
    r.snapkv_step_ms = spread_of(snapkv_ms);
    r.method_over_snapkv = spread_of(method_ratio);
  }
  return r;
}

void save_select_bench_inputs(const SelectBenchOptions& options, const std::string& dir) {
  check_options(options);
  const BenchPolicies policies = bench_policies(options);
  const BenchTensors t = bench_tensors(options, at::kCPU);
  std::filesystem::create_directories(dir);
  SafetensorsWriter writer;
  for (const auto& [name, tensor] :
       {std::pair<const char*, const at::Tensor&>{"q_window", t.queries}, {"keys", t.keys}}) {
    const at::Tensor c = tensor.contiguous();
    writer.add(name, DType::F32, c.sizes().vec(), c.data_ptr(), c.numel() * sizeof(float));
  }
  writer.write((std::filesystem::path(dir) / "tensors.safetensors").string());
  for (const auto& [name, policy] :
       {std::pair<const char*, const Policy&>{"baseline", policies.baseline},
        {"diverse", policies.diverse}}) {
    const std::string path = (std::filesystem::path(dir) / (std::string(name) + ".json")).string();
    std::ofstream out(path);
    out << policy_to_json(policy).dump(2) << "\n";
    if (!out) throw error_at(path, "cannot be written");
  }
}

namespace {

nlohmann::json spread_json(const Spread& s) {
  return nlohmann::json{{"median", s.median}, {"low", s.low}, {"high", s.high}};
}

}  // namespace

nlohmann::json select_bench_to_json(const SelectBenchResult& r) {
  const SelectBenchOptions& o = r.options;
  return nlohmann::json{
      {"tokens", o.tokens},
      {"layers", o.layers},
      {"heads", o.heads},
      {"kv_heads", o.kv_heads},
      {"head_dim", o.head_dim},
      {"budget", o.budget},
      {"window", o.window},
      {"lambda1", o.lambda1},
      {"lambda2", o.lambda2},
      {"repeats", o.repeats},
      {"device", o.device},
      {"threads", r.threads},
      {"baseline", "pyramidkv"},
      {"diverse", "global"},
      {"window_stats_ms", spread_json(r.window_stats_ms)},
      {"topk_select_ms", spread_json(r.topk_select_ms)},
      {"greedy_select_ms", spread_json(r.greedy_select_ms)},
      {"baseline_step_ms", spread_json(r.baseline_step_ms)},
      {"diverse_step_ms", spread_json(r.diverse_step_ms)},
      {"diverse_over_baseline", spread_json(r.diverse_over_baseline)},
      {"window_stats_gflop", r.window_stats_gflop},
      {"sgemm_gflops", spread_json(r.sgemm_gflops)},
      {"window_stats_over_floor", spread_json(r.window_stats_over_floor)},
      {"method", o.method},
      {"method_step_ms", spread_json(r.method_step_ms)},
      {"snapkv_step_ms", spread_json(r.snapkv_step_ms)},
      {"method_over_snapkv", spread_json(r.method_over_snapkv)},
  };
}

}  // namespace kvs::bench
