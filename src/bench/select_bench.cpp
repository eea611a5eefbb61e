#include "bench/select_bench.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
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
#include "evict/method.h"
#include "evict/policy.h"
#include "evict/window_scoring.h"
#include "evict/window_stats.h"
#include "model/attention.h"

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
  p.baseline.params.set(window_params().window, options.window);
  p.diverse.params.set(window_params().window, options.window);
  p.baseline.validate("baseline policy");
  p.diverse.validate("diverse policy");
  return p;
}

// One layer's tensors, reused for every layer: the budgets and coefficients still vary by layer.
// all_queries (every position's, for the attention column sums), pre_rope_queries and
// output_projection only where the --method needs them.
struct BenchTensors {
  at::Tensor queries, keys, values;
  at::Tensor all_queries, pre_rope_queries, output_projection, rope_inv_freq;
  at::Tensor row_lse;  // the fused prefill attention's, a by-product the column sums start from
};

// --method's policy at its defaults (a wrapper over kvpress's SnapKV), or none.
std::optional<Policy> method_policy(const SelectBenchOptions& options) {
  if (options.method.empty()) return std::nullopt;
  return policy_from_json(
      default_policy_json(find_method(options.method, "--method").info(), options.budget),
      "--method");
}

BenchTensors bench_tensors(const SelectBenchOptions& options, const at::Device& device) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  const auto randn = [&](at::IntArrayRef shape) {
    return at::randn(shape, generator, at::TensorOptions().dtype(at::kFloat)).to(device);
  };
  BenchTensors t;
  t.queries = randn({options.heads, options.window, options.head_dim});
  t.keys = randn({options.kv_heads, options.tokens, options.head_dim});
  t.values = randn({options.kv_heads, options.tokens, options.head_dim});
  const std::optional<Policy> method = method_policy(options);
  const uint32_t needs = method ? method->needs() : 0u;
  if (method && method->observation_window() > options.window)  // the method's own window
    t.queries = randn({options.heads, method->observation_window(), options.head_dim});
  if (needs & kNeedsColumnSums) {
    t.all_queries = randn({options.heads, options.tokens, options.head_dim});
    const c10::InferenceMode inference;  // as the prefill runs: the fused kernel applies
    model::prefill_attention(t.all_queries, t.keys, t.values, {}, &t.row_lse);  // untimed
  }
  if (needs & kNeedsPreRopeQueries) {
    t.pre_rope_queries = randn({options.heads, options.tokens, options.head_dim});
    t.rope_inv_freq =
        at::pow(1e4, -at::arange(0, options.head_dim, 2, at::kFloat) / double(options.head_dim))
            .to(device);
  }
  if (needs & kNeedsOutputProjection) {  // hidden = heads x head_dim, as Mistral's and SmolLM2's
    const int64_t hidden = options.heads * options.head_dim;
    t.output_projection = randn({hidden, hidden}) / std::sqrt(double(hidden));
  }
  return t;
}

// One layer as the prefill shows it; the column sums are computed here as the prefill does (the
// method's extra sweep over the keys is part of its cost), the other signals are the prefill's
// by-products.
void observe_layer(CompressingObserver& observer, const BenchTensors& t, int64_t layer) {
  model::PrefillLayer seen(layer, t.keys, t.values, t.queries);
  if (observer.signals() & model::kSignalColumnSums)
    seen.column_sums = model::prefill_attention_column_sums(t.all_queries, t.keys, {}, t.row_lse);
  seen.pre_rope_queries = t.pre_rope_queries;
  seen.rope_inv_freq = t.rope_inv_freq;
  seen.output_projection = t.output_projection;
  observer.on_layer(seen);
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
  const LayerBudgets budgets =
      layer_budgets(window_budget_spec(baseline.params, baseline.budget), options.tokens, L);
  const int64_t group_rows = options.heads / options.kv_heads * options.window;
  // The last W rows (the queries hold the --method's own window where it is wider).
  const at::Tensor window_rows =
      t.queries.narrow(1, t.queries.size(1) - options.window, options.window);

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
            observe_layer(observer, t, l);
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
      dynamic_cast<const WindowMethod&>(*policy.method)
          .select_tokens(stats, t.keys, policy.params, budgets.selected[static_cast<size_t>(l)], l,
                         L);
  };

  // --method: that method's policy and SnapKV's on uniform budgets, at the same budget and window.
  const std::optional<Policy> method = method_policy(options);
  Policy snapkv = snapkv_policy(options.budget);
  snapkv.params.set(window_params().window, options.window);

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
      for (int64_t l = 0; l < L; ++l) stats = compute_window_stats(window_rows, t.keys);
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
