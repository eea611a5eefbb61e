#include "evict/select_bench.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/timer.h"
#include "evict/compressed_cache.h"
#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "evict/window_stats.h"

#ifdef KVS_WITH_KERNELS
#include "kernels/evict_kernels.h"
#endif

namespace kvs::evict {

namespace {

// Waits for queued device work so that a timer measures it.
void sync(const at::Device& device) {
#ifdef KVS_WITH_KERNELS
  if (device.is_cuda()) kernels::synchronize_cuda();
#endif
}

// Milliseconds of fn(), device work included.
double time_ms(const at::Device& device, const std::function<void()>& fn) {
  sync(device);
  const Timer timer;
  fn();
  sync(device);
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

}  // namespace

SelectBenchResult run_select_bench(const SelectBenchOptions& options) {
  check_options(options);
  Policy baseline = pyramidkv_policy(options.budget);
  Policy diverse = global_policy(options.budget, options.lambda1, options.lambda2);
  baseline.budget.window = diverse.budget.window = options.window;
  baseline.validate("baseline policy");
  diverse.validate("diverse policy");

  const at::Device device(options.device == "cuda" ? at::kCUDA : at::kCPU);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  const auto randn = [&](at::IntArrayRef shape) {
    return at::randn(shape, generator, at::TensorOptions().dtype(at::kFloat)).to(device);
  };
  // One layer's tensors, reused for every layer: the budgets and coefficients still vary by layer.
  const at::Tensor queries = randn({options.heads, options.window, options.head_dim});
  const at::Tensor keys = randn({options.kv_heads, options.tokens, options.head_dim});
  const at::Tensor values = randn({options.kv_heads, options.tokens, options.head_dim});
  const int64_t L = options.layers;
  const LayerBudgets budgets = layer_budgets(baseline.budget, options.tokens, L);

  const auto whole_step = [&](const Policy& policy) {
    CompressingObserver observer({policy}, L, /*decode_capacity=*/32);
    for (int64_t l = 0; l < L; ++l)
      observer.on_layer(model::PrefillLayer{l, keys, values, queries});
    observer.take_cache();
  };

  SelectBenchResult r;
  r.options = options;
  r.threads = at::get_num_threads();
  const double inf = std::numeric_limits<double>::infinity();
  r.window_stats_ms = r.topk_select_ms = r.greedy_select_ms = r.baseline_step_ms =
      r.diverse_step_ms = inf;
  for (int64_t rep = 0; rep < options.repeats; ++rep) {
    std::vector<WindowStats> stats(static_cast<size_t>(L));
    r.window_stats_ms = std::min(r.window_stats_ms, time_ms(device, [&] {
                                   for (int64_t l = 0; l < L; ++l)
                                     stats[static_cast<size_t>(l)] =
                                         compute_window_stats(queries, keys);
                                 }));
    r.topk_select_ms = std::min(r.topk_select_ms, time_ms(device, [&] {
                                  for (int64_t l = 0; l < L; ++l) {
                                    select_tokens(stats[static_cast<size_t>(l)], keys, baseline,
                                                  budgets.selected[static_cast<size_t>(l)], l, L);
                                  }
                                }));
    r.greedy_select_ms = std::min(r.greedy_select_ms, time_ms(device, [&] {
                                    for (int64_t l = 0; l < L; ++l) {
                                      select_tokens(stats[static_cast<size_t>(l)], keys, diverse,
                                                    budgets.selected[static_cast<size_t>(l)], l, L);
                                    }
                                  }));
    stats.clear();
    r.baseline_step_ms =
        std::min(r.baseline_step_ms, time_ms(device, [&] { whole_step(baseline); }));
    r.diverse_step_ms = std::min(r.diverse_step_ms, time_ms(device, [&] { whole_step(diverse); }));
  }
  return r;
}

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
      {"window_stats_ms", r.window_stats_ms},
      {"topk_select_ms", r.topk_select_ms},
      {"greedy_select_ms", r.greedy_select_ms},
      {"baseline_step_ms", r.baseline_step_ms},
      {"diverse_step_ms", r.diverse_step_ms},
      {"diverse_over_baseline", r.diverse_over_baseline()},
  };
}

}  // namespace kvs::evict
