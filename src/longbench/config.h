// The official prompt templates and generation lengths, read from the user's LongBench directory:
// <dir>/config/dataset2prompt.json (dataset -> Python str.format template) and
// <dir>/config/dataset2maxlen.json (dataset -> max_new_tokens). The project ships neither text.
// Optionally <dir>/config/dataset2metric.json (dataset -> metric name, e.g. "retrieval_score")
// declares datasets beyond the official ones (e.g. RULER's generated tasks); each is
// registered (dataset.h) with a dev split of 100, or the count <dir>/config/dataset2dev.json gives
// it (dataset -> dev questions, 0: every record is a test question; kvsearch data math writes
// it). A directory with dataset2metric.json needs templates for its declared datasets only; one
// without it is an official release and needs all 16 English templates.
// Optionally <dir>/config/dataset2chat_template.json (dataset -> "none" | "mistral" | "llama3" |
// "chatml" | "smollm2") names the chat wrapper a dataset's prompts were generated for (RULER's
// length fit counts the wrapper's tokens); the prompt then uses it whatever the model's default.
// A text dataset (metric "perplexity" or "fidelity", kvsearch data text) also needs
// <dir>/config/dataset2prompt_tokens.json (dataset -> the tokens of each text read as the prompt);
// its max_new_tokens are the tokens fed after them (the text's own, or the full cache's greedy
// continuation).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "tokenizer/chat_template.h"

namespace kvs::longbench {

struct Config {
  std::map<std::string, std::string> prompt_templates;
  std::map<std::string, int> max_new_tokens;
  std::map<std::string, tokenizer::ChatTemplate> chat_templates;  // declared datasets only
  std::map<std::string, int64_t> prompt_tokens;                   // text datasets only

  const std::string& prompt_template(const std::string& dataset) const;  // throws if absent
  int max_new_tokens_for(const std::string& dataset) const;               // throws if absent
  std::optional<tokenizer::ChatTemplate> declared_chat_template(const std::string& dataset) const;
  int64_t prompt_tokens_for(const std::string& dataset) const;  // throws if absent
};

// Loads both files; every English dataset must have a well-formed template (format.h) and a
// positive max_new_tokens.
// Errors name the file and the offending key.
Config load_config(const std::string& longbench_dir);

std::string prompt_config_path(const std::string& longbench_dir);
std::string maxlen_config_path(const std::string& longbench_dir);
std::string metric_config_path(const std::string& longbench_dir);
std::string dev_config_path(const std::string& longbench_dir);
std::string chat_template_config_path(const std::string& longbench_dir);
std::string prompt_tokens_config_path(const std::string& longbench_dir);

}  // namespace kvs::longbench
