// The bounded-cache perplexity of a text (`kvsearch perplexity`), the evaluation of StreamingLLM,
// H2O and TOVA: the text's first token is the prompt and every later token is fed one at a time
// under each policy's decoding schedule (teacher forcing, every policy on one shared decode,
// decode_time.h); a perplexity is exp(mean -log p(token)) over the tokens after the first.
//   {"method": "streaming_llm", "n_sink": 4, "decoding": {"interval": 1, "target": 256}}
// is StreamingLLM's rolling cache of 4 sinks and the 252 most recent entries; n_sink 0 is the
// window-only control. Without a policy, or with full_cache, the full cache too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evict/policy.h"
#include "model/runtime.h"

namespace kvs::search {

struct PerplexityRequest {
  std::string model_dir;
  std::string text_path;   // UTF-8 text
  int64_t max_tokens = 0;  // > 0: the text's first max_tokens tokens
  std::vector<evict::Policy> policies;
  bool full_cache = false;  // also the full cache (always without policies)
  // Overrides every policy's schedule's positions ("original" | "cache"); needs schedules.
  std::string positions;
  int64_t block = 1024;  // tokens per block of block_perplexity
  model::LoadOptions load;
};

struct PerplexityRow {
  std::optional<evict::Policy> policy;  // as run (--positions applied); none: the full cache
  std::string name;                     // the policy's, or "full cache"
  double nll = 0;                       // mean -log p over tokens 2..tokens
  double perplexity = 0;
  // Per block of `block` predicted tokens (the last one may be shorter): exp(mean -log p).
  std::vector<double> block_perplexity;
  int64_t largest_cache = 0;  // the most entries one KV head of one layer held
  int64_t compressions = 0;
  std::vector<double> token_nll;  // per predicted token
};

struct PerplexityResult {
  int64_t tokens = 0;               // tokens of the text read (the first is the prompt)
  std::vector<PerplexityRow> rows;  // per policy in order, then the full cache
  double seconds = 0;
};

PerplexityResult text_perplexity(const PerplexityRequest& request);

}  // namespace kvs::search
