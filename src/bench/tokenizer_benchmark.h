// `kvsearch bench tokenizer`: our encode speed on a generated text next to the tiktoken package's
// on the same text in the same run (tiktoken runs in a python3 subprocess).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tokenizer/tokenizer.h"

namespace kvs::bench {

// A deterministic English-like text of `words` words: common words, invented words, numbers,
// punctuation, contractions, some non-Latin words and emoji, paragraphs.
std::string benchmark_text(int64_t words, uint64_t seed);

struct EncodeTiming {
  int64_t tokens = 0;
  double seconds = 0;  // best of the repeats
  double tokens_per_second() const { return seconds > 0 ? tokens / seconds : 0; }
};

struct TokenizerBenchmark {
  int64_t words = 0;
  int64_t bytes = 0;
  EncodeTiming ours;
  std::optional<EncodeTiming> tiktoken;  // absent when it could not run; see tiktoken_note
  std::string tiktoken_note;             // why tiktoken did not run, or "" when it did
  bool same_ids = false;                 // tiktoken produced exactly our ids
  std::optional<double> speed_ratio() const {
    if (!tiktoken || tiktoken->tokens_per_second() <= 0) return std::nullopt;
    return ours.tokens_per_second() / tiktoken->tokens_per_second();
  }
};

// tokenizer_file: the file `tokenizer` was loaded from (tiktoken's Encoding is built from it);
// `python` runs the tiktoken side.
TokenizerBenchmark run_tokenizer_benchmark(const tokenizer::Tokenizer& tokenizer,
                                           const std::string& tokenizer_file, int64_t words,
                                           int repeats, const std::string& python);

}  // namespace kvs::bench
