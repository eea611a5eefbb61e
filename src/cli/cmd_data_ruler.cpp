// kvsearch data ruler: RULER's synthetic tasks at any length in the model's own tokens, written in
// the LongBench layout.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "ruler/writer.h"

namespace {

void setup_data_ruler(CLI::App& parent) {
  auto o = std::make_shared<kvs::ruler::RulerDataOptions>();
  auto* cmd = parent.add_subcommand(
      "ruler", "Generate RULER's synthetic tasks at the given lengths in the model's tokens (LongBench layout)");
  cmd->add_option("--model", o->model, "Model (directory, .gguf, registered name) or tokenizer file whose tokens count")
      ->required();
  cmd->add_option("--out", o->out_dir, "Output directory (data/, config/, ruler_generation.json)")->required();
  cmd->add_option("--lengths", o->lengths, "Target lengths in tokens: prompt + tokens to generate")
      ->delimiter(',')
      ->required();
  cmd->add_option("--count", o->count, "Records per task and length")->capture_default_str();
  cmd->add_option("--max-new-tokens", o->max_new_tokens,
                  "Cap every task's tokens to generate (0: RULER's, niah 128 ... qa 32); the fit reserves the cap")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Generator seed")->capture_default_str();
  cmd->add_option("--tasks", o->tasks,
                  "Tasks (default: all; qa_1/qa_2 without --squad/--hotpotqa are skipped with a note)")
      ->delimiter(',');
  cmd->add_option("--haystack", o->haystack_file,
                  "UTF-8 text for the essay haystack (default: /usr/share/common-licenses)");
  cmd->add_option("--squad", o->squad_file,
                  "SQuAD v2 dev JSON (dev-v2.0.json) for qa_1: its answerable questions and paragraphs");
  cmd->add_option("--hotpotqa", o->hotpotqa_file,
                  "HotpotQA dev distractor JSON (hotpot_dev_distractor_v1.json) for qa_2");
  cmd->add_option("--templates", o->templates_file,
                  "RULER's exact wording (tools/ruler_extract_templates.py; default: kvsearch's own)");
  cmd->add_option("--chat-template", o->chat_template,
                  "auto | none | mistral | llama3 | chatml | smollm2 | qwen2.5 | qwen3-no-think | "
                  "deepseek-r1 "
                  "(auto: the checkpoint's, none for Mistral)")
      ->capture_default_str();
  cmd->callback([o] {
    const auto result = kvs::ruler::write_ruler_data(*o);
    for (const auto& d : result.datasets)
      std::printf("%s: %lld records, %lld-%lld tokens\n", d.path.c_str(),
                  static_cast<long long>(d.records), static_cast<long long>(d.min_length),
                  static_cast<long long>(d.max_length));
    for (const auto& note : result.notes) std::printf("note: %s\n", note.c_str());
    std::printf("chat template %s\n", result.chat_template.c_str());
  });
}

const kvs::cli::CommandRegistration data_ruler_registration("data ruler", setup_data_ruler);

}  // namespace
