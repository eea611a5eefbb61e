// kvsearch bench search: K policies one at a time vs batched on shared prefills.
#include <CLI/CLI.hpp>
#include <iostream>

#include "bench/search_bench.h"
#include "cli/command.h"
#include "core/settings.h"

namespace {

void setup_bench_search(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("search", "Policies evaluated one at a time vs batched");
  auto opts = std::make_shared<kvs::bench::SearchBenchOptions>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--model", opts->model_dir, "Checkpoint directory (or KVSEARCH_MODEL)");
  cmd->add_option("--longbench", opts->longbench_dir, "LongBench directory (or KVSEARCH_LONGBENCH)");
  cmd->add_option("--dataset", opts->dataset, "Dataset")->required();
  cmd->add_flag("--methods", opts->methods,
                "One policy per registered method (kvsearch methods) at --budget, instead of K "
                "Global policies");
  cmd->add_option("--policies", opts->policies, "Policies (K)")->capture_default_str();
  cmd->add_option("--questions", opts->questions, "Questions")->capture_default_str();
  cmd->add_option("--budget", opts->budget, "Budget")->capture_default_str();
  cmd->add_option("--new-tokens", opts->max_new_tokens,
                  "Fixed decode length, stop tokens ignored (default: the dataset's settings)");
  cmd->add_option("--device", opts->load.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_flag("--json", *json, "One JSON object");
  cmd->callback([opts, json] {
    opts->model_dir = kvs::resolve_setting(kvs::kModelSetting, opts->model_dir);
    opts->longbench_dir = kvs::resolve_setting(kvs::kLongBenchSetting, opts->longbench_dir);
    const auto r = kvs::bench::bench_search(*opts);
    std::cout << (*json ? kvs::bench::search_bench_json(r) + "\n"
                        : kvs::bench::search_bench_table(r));
  });
}

const kvs::cli::CommandRegistration bench_search_registration("bench search", setup_bench_search);

}  // namespace
