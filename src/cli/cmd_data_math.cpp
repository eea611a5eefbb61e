// kvsearch data math: the user's math and reasoning sets (AIME, MATH-500, GSM8K JSONL), written in
// the LongBench layout with their scorers, so run, generate --dataset and experiments read them.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "longbench/math_sets.h"

namespace {

void setup_data_math(CLI::App& parent) {
  auto o = std::make_shared<kvs::longbench::MathSetOptions>();
  auto specs = std::make_shared<std::vector<std::string>>();
  auto* cmd = parent.add_subcommand(
      "math",
      "Write math and reasoning sets (AIME, MATH-500, GSM8K JSONL) in the LongBench layout");
  cmd->add_option("--set", *specs,
                  "NAME:LAYOUT:FILE, repeatable; LAYOUT aime ({problem|question, answer}), math500 "
                  "({problem, answer}) or gsm8k ({question, answer \"... #### 72\"})")
      ->required();
  cmd->add_option("--out", o->out_dir, "Output directory (data/, config/, math_sets.json)")
      ->required();
  cmd->add_option("--max-new-tokens", o->max_new_tokens,
                  "Tokens to generate per problem (a reasoning trace)")
      ->capture_default_str();
  cmd->add_option("--dev", o->dev,
                  "Dev questions per set (searches move on them; experiments record dev scores "
                  "first); the rest are test questions")
      ->capture_default_str();
  cmd->callback([o, specs] {
    for (const auto& spec : *specs)
      o->sets.push_back(kvs::longbench::parse_math_set(spec, "--set"));
    for (const auto& s : kvs::longbench::write_math_sets(*o))
      std::printf("%s: %lld problems, scored by %s\n", s.path.c_str(),
                  static_cast<long long>(s.records), s.metric.c_str());
  });
}

const kvs::cli::CommandRegistration data_math_registration("data math", setup_data_math);

}  // namespace
