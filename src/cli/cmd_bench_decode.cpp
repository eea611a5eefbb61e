// kvsearch bench decode: K decode-time policies on one shared decode beside one alone and the
// full cache.
#include <CLI/CLI.hpp>
#include <iostream>

#include "bench/decode_bench.h"
#include "cli/command.h"
#include "core/settings.h"

namespace {

void setup_bench_decode(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "decode", "Decode-time policies on one shared decode vs one alone vs the full cache");
  auto opts = std::make_shared<kvs::bench::DecodeBenchOptions>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--model", opts->model_dir, "Checkpoint directory (or KVSEARCH_MODEL)");
  cmd->add_option("--text", opts->text_path, "UTF-8 text: the prompt and the teacher tokens")
      ->required();
  cmd->add_option("--prompt-tokens", opts->prompt_tokens, "Prompt tokens")->capture_default_str();
  cmd->add_option("--new-tokens", opts->new_tokens, "Teacher-forced decoding steps")
      ->capture_default_str();
  cmd->add_option("--policy", opts->policy_files,
                  "A policy JSON with a decoding schedule (repeat; default: every method that can "
                  "decode, at its defaults with --interval/--target/--buffer)");
  cmd->add_option("--interval", opts->interval, "Schedule of the default policies")
      ->capture_default_str();
  cmd->add_option("--target", opts->target, "Schedule of the default policies")
      ->capture_default_str();
  cmd->add_option("--buffer", opts->buffer, "Schedule of the default policies")
      ->capture_default_str();
  cmd->add_option("--device", opts->load.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_flag("--json", *json, "One JSON object");
  cmd->callback([opts, json] {
    opts->model_dir = kvs::resolve_setting(kvs::kModelSetting, opts->model_dir);
    const auto r = kvs::bench::bench_decode(*opts);
    std::cout << (*json ? kvs::bench::decode_bench_json(r) + "\n"
                        : kvs::bench::decode_bench_table(r));
  });
}

const kvs::cli::CommandRegistration bench_decode_registration("bench decode", setup_bench_decode);

}  // namespace
