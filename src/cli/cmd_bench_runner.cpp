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
  cmd->add_option("--model", opts->model_dir, "Checkpoint (directory, .gguf, registered name)")->required();
  cmd->add_option("--prompt-tokens", opts->prompt_tokens, "Prompt lengths, e.g. 1024,4096,8160")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--new-tokens", opts->new_tokens, "Decode steps")->capture_default_str();
  cmd->add_option("--repeats", opts->repeats, "Interleaved repeats; figures are their median")
      ->capture_default_str();
  cmd->add_option("--device", opts->load.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--dtype", opts->load.dtype, "auto | f32 | f16 | bf16")->capture_default_str();
  cmd->add_flag("--json", *json, "One JSON object");
  cmd->callback([opts, json] {
    const auto result = kvs::bench::bench_runner(*opts);
    std::cout << (*json ? kvs::bench::runner_bench_json(result) + "\n"
                        : kvs::bench::runner_bench_table(result));
  });
}

const kvs::cli::CommandRegistration bench_runner_registration("bench runner", setup_bench_runner);

}  // namespace
