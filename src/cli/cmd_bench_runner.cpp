// kvsearch bench runner: prefill/decode speed next to the machine's sgemm rate and bandwidth.
#include <CLI/CLI.hpp>
#include <iostream>

#include "bench/runner_bench.h"
#include "cli/command.h"

namespace {

void setup_bench_runner(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "runner", "Prefill and decode speed of a checkpoint at one or more prompt lengths");
  auto opts = std::make_shared<kvs::bench::RunnerBenchOptions>();
  auto json = std::make_shared<bool>(false);
  auto beside = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--model", opts->model_dir, "Checkpoint (directory, .gguf, registered name)")->required();
  cmd->add_option("--prompt-tokens", opts->prompt_tokens, "Prompt lengths, e.g. 1024,4096,8160")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--new-tokens", opts->new_tokens, "Decode steps")->capture_default_str();
  cmd->add_option("--repeats", opts->repeats, "Interleaved repeats; figures are their median")
      ->capture_default_str();
  cmd->add_option("--device", opts->load.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--dtype", opts->load.dtype, "auto | f32 | f16 | bf16")->capture_default_str();
  cmd->add_option("--beside", *beside,
                  "More checkpoints run beside --model, repeat by repeat, each compared with it "
                  "(e.g. a llama of the same shapes)");
  cmd->add_flag("--json", *json, "One JSON object (one a line with --beside)");
  cmd->callback([opts, json, beside] {
    std::vector<std::string> models = {opts->model_dir};
    models.insert(models.end(), beside->begin(), beside->end());
    const auto results = kvs::bench::bench_runners(models, *opts);
    std::vector<kvs::bench::NamedRunnerResult> runs;
    for (size_t m = 0; m < models.size(); ++m) {
      runs.push_back({models[m], results[m]});
      if (models.size() > 1 && !*json) std::cout << models[m] << ":\n";
      std::cout << (*json ? kvs::bench::runner_bench_json(results[m]) + "\n"
                          : kvs::bench::runner_bench_table(results[m]));
    }
    if (!*json) std::cout << kvs::bench::runner_bench_comparison(runs);
  });
}

const kvs::cli::CommandRegistration bench_runner_registration("bench runner", setup_bench_runner);

}  // namespace
