// kvsearch bench tokenizer: our encode speed next to the tiktoken package's, same text, same run.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench/tokenizer_benchmark.h"
#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "tokenizer/tokenizer.h"

namespace kvs::cli {

namespace {

struct BenchTokenizerOptions {
  std::string model;
  std::string tokenizer;
  int64_t words = 100000;
  int repeats = 3;
  std::string python = "python3";
  bool json = false;
};

void run(const BenchTokenizerOptions& o) {
  if (o.model.empty() == o.tokenizer.empty())
    throw Error("bench tokenizer: give exactly one of --model or --tokenizer");
  const std::string file = o.model.empty() ? o.tokenizer : tokenizer::find_tokenizer_file(o.model);
  const auto tok = tokenizer::load_tokenizer_file(file);
  const auto r = bench::run_tokenizer_benchmark(*tok, file, o.words, o.repeats, o.python);
  const auto ratio = r.speed_ratio();
  if (r.tiktoken && !r.same_ids) log::warn("tiktoken's ids differ from ours on the benchmark text");

  if (o.json) {
    nlohmann::json out = {
        {"tokenizer", file},
        {"kind", tok->kind()},
        {"words", r.words},
        {"bytes", r.bytes},
        {"tokens", r.ours.tokens},
        {"seconds", r.ours.seconds},
        {"tokens_per_second", r.ours.tokens_per_second()},
        {"tiktoken_tokens_per_second", nullptr},
        {"speed_ratio_vs_tiktoken", nullptr},
        {"same_ids_as_tiktoken", nullptr},
        {"tiktoken_note", r.tiktoken_note},
    };
    if (r.tiktoken) {
      out["tiktoken_tokens_per_second"] = r.tiktoken->tokens_per_second();
      out["tiktoken_seconds"] = r.tiktoken->seconds;
      out["same_ids_as_tiktoken"] = r.same_ids;
    }
    if (ratio) out["speed_ratio_vs_tiktoken"] = *ratio;
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("tokenizer  %s (%s)\n", file.c_str(), tok->kind().c_str());
  std::printf("text       %lld words, %lld bytes (generated, best of %d runs)\n",
              static_cast<long long>(r.words), static_cast<long long>(r.bytes), o.repeats);
  std::printf("kvsearch   %lld tokens in %.4f s: %.2f M tokens/s\n",
              static_cast<long long>(r.ours.tokens), r.ours.seconds,
              r.ours.tokens_per_second() / 1e6);
  if (!r.tiktoken) {
    std::printf("tiktoken   not run: %s\n", r.tiktoken_note.c_str());
    return;
  }
  std::printf("tiktoken   %lld tokens in %.4f s: %.2f M tokens/s (same ids: %s)\n",
              static_cast<long long>(r.tiktoken->tokens), r.tiktoken->seconds,
              r.tiktoken->tokens_per_second() / 1e6, r.same_ids ? "yes" : "NO");
  if (ratio) std::printf("ratio      %.2fx tiktoken's speed (target >= 0.50)\n", *ratio);
}

void setup_bench_tokenizer(CLI::App& parent) {
  auto options = std::make_shared<BenchTokenizerOptions>();
  auto* cmd =
      parent.add_subcommand("tokenizer", "Encode speed of our tokenizer vs the tiktoken package");
  cmd->add_option("--model", options->model, "Checkpoint directory (its tokenizer)");
  cmd->add_option("--tokenizer", options->tokenizer,
                  "Tokenizer file (tiktoken tokenizer.model, tokenizer.json, ...)");
  cmd->add_option("--words", options->words, "Words in the generated text")->capture_default_str();
  cmd->add_option("--repeats", options->repeats, "Timed runs per side (best is kept)")
      ->capture_default_str();
  cmd->add_option("--python", options->python, "Python with tiktoken for the comparison")
      ->capture_default_str();
  cmd->add_flag("--json", options->json, "Print one JSON object");
  cmd->callback([options] { run(*options); });
}

const CommandRegistration bench_tokenizer_registration("bench tokenizer", setup_bench_tokenizer);

}  // namespace

}  // namespace kvs::cli
