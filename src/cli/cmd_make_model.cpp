// kvsearch make-model: a random-weight checkpoint in the real Hugging Face layout.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.h"
#include "core/log.h"
#include "model/presets.h"

namespace {

void setup_make_model(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("make-model", "Write a random-weight checkpoint (HF layout)");
  auto opts = std::make_shared<kvs::model::MakeModelOptions>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("--out", *out, "Output directory")->required();
  cmd->add_option("--preset", opts->preset,
                  "tiny | tiny-llama | tiny-llama3 | tiny-qwen2 | tiny-qwen3 | small | 110m |\n"
                  "qwen3-0.6b | llama-0.6b (Qwen3-0.6B's shapes)")
      ->capture_default_str();
  cmd->add_option("--seed", opts->seed, "Random seed")->capture_default_str();
  cmd->add_option("--dtype", opts->dtype, "Stored dtype: f32 | f16 | bf16")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
  cmd->add_option(
         "--tokenizer", opts->tokenizer_file,
         "Tokenizer to copy in as tokenizer.model (SentencePiece or tiktoken) or tokenizer.json\n"
         "(a byte-level BPE, with its tokenizer_config.json beside it); sets the vocabulary.\n"
         "tiny-llama3 without one gets a synthetic Llama-3-shaped BPE vocabulary")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-shard-mb", opts->max_shard_bytes, "Shard size limit in MiB")
      ->transform([](std::string s) { return std::to_string(std::stoll(s) << 20); });
  cmd->add_option("--sliding-window", opts->sliding_window, "Sliding window (0: none)");
  cmd->callback([opts, out] {
    const auto config = kvs::model::make_random_model(*out, *opts);
    kvs::log::info(kvs::strfmt("wrote %s: preset %s, %.2fM parameters, %lld layers, vocab %lld",
                               out->c_str(), opts->preset.c_str(),
                               config.parameter_count() / 1e6,
                               static_cast<long long>(config.num_hidden_layers),
                               static_cast<long long>(config.vocab_size)));
  });
}

const kvs::cli::CommandRegistration make_model_registration("make-model", setup_make_model);

}  // namespace
