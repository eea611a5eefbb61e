// How the answer to a LongBench prompt is generated: greedy decoding of at most max_new_tokens
// (dataset2maxlen.json), stopping at a stop token. The reference implementation passes
// min_length = prompt length + 1, so the stop tokens are masked out at the first step: every
// answer has at least one token. samsum also stops at a newline (its few-shot prompt would
// otherwise continue with a new dialogue).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "longbench/config.h"
#include "tokenizer/tokenizer.h"

namespace kvs::longbench {

struct GenerationSettings {
  int max_new_tokens = 0;
  int min_new_tokens = 1;          // stop tokens cannot end the answer before this many tokens
  std::vector<int32_t> stop_ids;   // the tokenizer's EOS ids, plus the newline token for samsum
};

GenerationSettings generation_settings(const Config& config, const std::string& dataset,
                                       const tokenizer::Tokenizer& tok);

// The newline token as the official pred.py finds it: the last id of encode("\n").
int32_t newline_token_id(const tokenizer::Tokenizer& tok);

}  // namespace kvs::longbench
