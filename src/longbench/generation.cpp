#include "longbench/generation.h"

#include <algorithm>

#include "core/error.h"
#include "longbench/dataset.h"

namespace kvs::longbench {

int32_t newline_token_id(const tokenizer::Tokenizer& tok) {
  const auto ids = tok.encode("\n");
  if (ids.empty()) throw Error("tokenizer (" + tok.kind() + ") encodes a newline to no token");
  return ids.back();
}

GenerationSettings generation_settings(const Config& config, const std::string& dataset,
                                       const tokenizer::Tokenizer& tok) {
  dataset_info(dataset);  // rejects unknown names
  GenerationSettings settings;
  settings.max_new_tokens = config.max_new_tokens_for(dataset);
  settings.stop_ids = tok.eos_ids();
  if (dataset == "samsum") {
    const int32_t newline = newline_token_id(tok);
    if (std::find(settings.stop_ids.begin(), settings.stop_ids.end(), newline) ==
        settings.stop_ids.end())
      settings.stop_ids.push_back(newline);
  }
  return settings;
}

}  // namespace kvs::longbench
