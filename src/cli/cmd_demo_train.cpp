// kvsearch demo train: tokenizer + small Mistral trained on the demo tasks, scored by the runner.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.h"
#include "core/strfmt.h"
#include "demo/demo_training.h"

namespace {

void setup(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "train", "Train the demo tokenizer and model on the demo tasks, then score them");
  auto o = std::make_shared<kvs::demo::DemoTrainOptions>();
  cmd->add_option("--data", o->data_dir, "Directory written by `kvsearch demo data`")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", o->out_dir, "Checkpoint directory")->required();
  cmd->add_option("--log", o->log_path, "Training log (default: <out>/train_log.json)");
  cmd->add_option("--steps", o->train.steps, "Optimizer steps")->capture_default_str();
  cmd->add_option("--seed", o->train.seed, "Seed of weights, data and tokenizer corpus")
      ->capture_default_str();
  cmd->add_option("--tokens-per-step", o->train.tokens_per_step, "Tokens per batch")
      ->capture_default_str();
  cmd->add_option("--lr", o->train.learning_rate, "Peak learning rate")->capture_default_str();
  cmd->add_option("--warmup", o->train.warmup_steps, "Warm-up steps")->capture_default_str();
  cmd->add_option("--passage-percent", o->train.passage_percent,
                  "Share of passage-retrieval sequences (%)")
      ->capture_default_str();
  cmd->add_option("--context-loss", o->train.context_loss_weight,
                  "Weight of the next-token loss on non-answer tokens (0: answers only)")
      ->capture_default_str();
  cmd->add_option("--check-every", o->train.check_every,
                  "Steps between teacher-forced checks (0: never)")
      ->capture_default_str();
  cmd->add_option("--vocab", o->vocab_size, "Tokenizer vocabulary size")->capture_default_str();
  cmd->add_option("--layers", o->shape.layers, "Layers")->capture_default_str();
  cmd->add_option("--hidden", o->shape.hidden, "Hidden size")->capture_default_str();
  cmd->add_option("--heads", o->shape.heads, "Attention heads")->capture_default_str();
  cmd->add_option("--kv-heads", o->shape.kv_heads, "Key-value heads (GQA)")->capture_default_str();
  cmd->add_option("--head-dim", o->shape.head_dim, "Width of each attention head")->capture_default_str();
  cmd->add_option("--rope-theta", o->shape.rope_theta, "RoPE base")->capture_default_str();
  cmd->add_option("--intermediate", o->shape.intermediate, "MLP width")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Stored dtype: f32 | f16 | bf16")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--eval-limit", o->eval_limit, "Test questions per task (0: all)")
      ->capture_default_str();
  cmd->callback([o] {
    const auto report = kvs::demo::run_demo_training(*o);
    std::cout << kvs::strfmt("model: %s (%.2fM parameters, %.1f MB), trained in %.0f s, final loss %.4f\n",
                             o->out_dir.c_str(), report.parameters / 1e6,
                             report.checkpoint_bytes / 1e6, report.train_seconds, report.final_loss);
    for (const auto& s : report.scores)
      std::cout << kvs::strfmt("%-24s %s split, %lld questions (%.0f tokens on average): full-cache score %.2f\n",
                               s.dataset.c_str(), s.split.c_str(), static_cast<long long>(s.questions),
                               s.mean_prompt_tokens, s.score);
    std::cout << "log: " << report.log_path << "\n";
  });
}

const kvs::cli::CommandRegistration registration("demo train", setup);

}  // namespace
