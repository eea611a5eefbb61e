// kvsearch bench select: the cost of eviction per prompt, baseline (PyramidKV) vs diverse (Global).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/select_bench.h"
#include "cli/command.h"
#include "core/log.h"
#include "model/runtime.h"

namespace kvs::cli {
namespace {

struct BenchOptions {
  bench::SelectBenchOptions bench;
  std::string device = "cpu";
  std::string save_inputs;
  bool json = false;
};

std::string spread_ms(const bench::Spread& s) {
  return strfmt("%9.1f ms  [%.1f, %.1f]", s.median, s.low, s.high);
}

void run(BenchOptions o) {
  o.bench.device = model::resolve_device(o.device);
  if (!o.save_inputs.empty()) {
    bench::save_select_bench_inputs(o.bench, o.save_inputs);
    log::info("bench select: inputs and policies written to " + o.save_inputs);
    return;
  }
  const bench::SelectBenchResult r = bench::run_select_bench(o.bench);
  if (o.json) {
    std::printf("%s\n", bench::select_bench_to_json(r).dump(2).c_str());
    return;
  }
  const auto& b = r.options;
  std::printf(
      "eviction per prompt: %lld tokens, %lld layers, %lld/%lld heads, head_dim %lld, "
      "budget %lld, window %lld, %s, %d threads, median [low, high] of %lld interleaved repeats\n",
      (long long)b.tokens, (long long)b.layers, (long long)b.heads, (long long)b.kv_heads,
      (long long)b.head_dim, (long long)b.budget, (long long)b.window, b.device.c_str(), r.threads,
      (long long)b.repeats);
  std::printf("  window statistics          %s\n", spread_ms(r.window_stats_ms).c_str());
  std::printf("    compute floor            %9.1f ms  (%.1f GFLOP at the sgemm probe's %.1f GFLOP/s)\n",
              r.window_stats_gflop / r.sgemm_gflops.median * 1e3, r.window_stats_gflop,
              r.sgemm_gflops.median);
  std::printf("    over the floor           %9.2f     [%.2f, %.2f]   (target <= 1.5)\n",
              r.window_stats_over_floor.median, r.window_stats_over_floor.low,
              r.window_stats_over_floor.high);
  std::printf("  top-k selection (pyramid)  %s\n", spread_ms(r.topk_select_ms).c_str());
  std::printf("  greedy diverse selection   %s   (lambda1 %g, lambda2 %g)\n",
              spread_ms(r.greedy_select_ms).c_str(), b.lambda1, b.lambda2);
  std::printf("  complete step, baseline    %s\n", spread_ms(r.baseline_step_ms).c_str());
  std::printf("  complete step, diverse     %s\n", spread_ms(r.diverse_step_ms).c_str());
  std::printf("  diverse / baseline         %9.3f     [%.3f, %.3f]   (target <= 1.10)\n",
              r.diverse_over_baseline.median, r.diverse_over_baseline.low,
              r.diverse_over_baseline.high);
  if (b.method.empty()) return;
  std::printf("  complete step, %-11s %s\n", b.method.c_str(), spread_ms(r.method_step_ms).c_str());
  std::printf("  complete step, snapkv      %s   (uniform budgets)\n",
              spread_ms(r.snapkv_step_ms).c_str());
  const std::string ratio = b.method + " / snapkv";
  std::printf("  %-26s %9.3f     [%.3f, %.3f]\n", ratio.c_str(), r.method_over_snapkv.median,
              r.method_over_snapkv.low, r.method_over_snapkv.high);
}

void setup_bench_select(CLI::App& parent) {
  auto options = std::make_shared<BenchOptions>();
  bench::SelectBenchOptions& b = options->bench;
  CLI::App* cmd = parent.add_subcommand(
      "select",
      "Time window statistics, top-k and greedy selection and the complete eviction step "
      "per prompt on synthetic tensors");
  cmd->add_option("--tokens", b.tokens, "prompt length")->capture_default_str();
  cmd->add_option("--layers", b.layers, "layers")->capture_default_str();
  cmd->add_option("--heads", b.heads, "query heads")->capture_default_str();
  cmd->add_option("--kv-heads", b.kv_heads, "KV heads")->capture_default_str();
  cmd->add_option("--head-dim", b.head_dim, "head dimension")->capture_default_str();
  cmd->add_option("--budget", b.budget, "entries kept per head per layer (window included)")
      ->capture_default_str();
  cmd->add_option("--window", b.window, "observation window W")->capture_default_str();
  cmd->add_option("--method", b.method,
                  "a registered method (kvsearch methods) whose step is timed beside SnapKV's");
  cmd->add_option("--lambda1", b.lambda1, "diverse policy: dispersion coefficient")
      ->capture_default_str();
  cmd->add_option("--lambda2", b.lambda2, "diverse policy: redundancy coefficient")
      ->capture_default_str();
  cmd->add_option("--repeats", b.repeats, "interleaved repeats; each figure is their median")
      ->capture_default_str();
  cmd->add_option("--seed", b.seed, "seed of the synthetic tensors")->capture_default_str();
  cmd->add_option("--device", options->device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_flag("--json", options->json, "print one JSON object");
  cmd->add_option("--save-inputs", options->save_inputs,
                  "write the inputs and both policies for `kvsearch select` to this directory "
                  "instead of timing");
  cmd->callback([options] { run(*options); });
}

const CommandRegistration bench_select_registration("bench select", setup_bench_select);

}  // namespace
}  // namespace kvs::cli
