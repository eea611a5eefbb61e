// kvsearch bench select: the cost of eviction per prompt, baseline (PyramidKV) vs diverse (Global).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/log.h"
#include "evict/select_bench.h"
#include "model/runtime.h"

namespace kvs::cli {
namespace {

struct BenchOptions {
  evict::SelectBenchOptions bench;
  std::string device = "cpu";
  bool json = false;
};

void run(BenchOptions o) {
  o.bench.device = model::resolve_device(o.device);
  const evict::SelectBenchResult r = evict::run_select_bench(o.bench);
  if (o.json) {
    std::printf("%s\n", evict::select_bench_to_json(r).dump(2).c_str());
    return;
  }
  const auto& b = r.options;
  std::printf(
      "eviction per prompt: %lld tokens, %lld layers, %lld/%lld heads, head_dim %lld, "
      "budget %lld, window %lld, %s, %d threads, best of %lld\n",
      (long long)b.tokens, (long long)b.layers, (long long)b.heads, (long long)b.kv_heads,
      (long long)b.head_dim, (long long)b.budget, (long long)b.window, b.device.c_str(), r.threads,
      (long long)b.repeats);
  std::printf("  window statistics          %9.1f ms\n", r.window_stats_ms);
  std::printf("  top-k selection (pyramid)  %9.1f ms\n", r.topk_select_ms);
  std::printf("  greedy diverse selection   %9.1f ms   (lambda1 %g, lambda2 %g)\n",
              r.greedy_select_ms, b.lambda1, b.lambda2);
  std::printf("  complete step, baseline    %9.1f ms\n", r.baseline_step_ms);
  std::printf("  complete step, diverse     %9.1f ms\n", r.diverse_step_ms);
  std::printf("  diverse / baseline         %9.3f   (target <= 1.25)\n", r.diverse_over_baseline());
}

void setup(CLI::App& parent) {
  auto options = std::make_shared<BenchOptions>();
  evict::SelectBenchOptions& b = options->bench;
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
  cmd->add_option("--lambda1", b.lambda1, "diverse policy: dispersion coefficient")
      ->capture_default_str();
  cmd->add_option("--lambda2", b.lambda2, "diverse policy: redundancy coefficient")
      ->capture_default_str();
  cmd->add_option("--repeats", b.repeats, "runs; each figure is the best")->capture_default_str();
  cmd->add_option("--seed", b.seed, "seed of the synthetic tensors")->capture_default_str();
  cmd->add_option("--device", options->device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_flag("--json", options->json, "print one JSON object");
  cmd->callback([options] { run(*options); });
}

const CommandRegistration registration("bench select", setup);

}  // namespace
}  // namespace kvs::cli
