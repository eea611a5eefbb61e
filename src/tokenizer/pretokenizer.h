// The regex pre-tokenizer of byte-level BPE (tiktoken's pat_str, HF's Split/Digits/ByteLevel
// pre-tokenizers, llama.cpp's regex_exprs): cuts text into pieces that BPE then encodes one by
// one. PCRE2 with UTF and Unicode properties (\p{L}, \p{N}: std::regex has neither),
// JIT-compiled when the platform allows.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvs::tokenizer {

class PreTokenizer {
 public:
  // `source` names where the pattern came from, for error messages. \s and \S are matched as
  // Unicode White_Space, as the references (Rust's regex crate) do: PCRE2's own \s also takes
  // U+180E, so they are rewritten into explicit classes before compiling.
  PreTokenizer(const std::string& pattern, const std::string& source);
  // Patterns applied in turn: each splits every piece of the one before on its own, so a piece's
  // ends are the text's ends for lookarounds (HF's Sequence, llama.cpp's regex_exprs; SmolLM2:
  // every \p{N} split off first, then GPT-2's pattern).
  PreTokenizer(const std::vector<std::string>& patterns, const std::string& source);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the pieces of `text` (valid UTF-8) to `pieces`: every match, and every stretch between
  // matches as a piece of its own (HF's "Isolated" behaviour; tiktoken's patterns match
  // everything, so there are no such stretches with them). Empty matches are skipped.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  struct Compiled;
  struct MatchState;
  void split_with(size_t stage, std::string_view text, MatchState& state,
                  std::vector<std::string_view>& pieces) const;

  std::vector<std::string> patterns_;
  std::string source_;
  std::vector<std::unique_ptr<Compiled>> compiled_;
};

// GPT-2's pattern: what HF's ByteLevel pre-tokenizer with use_regex applies, and llama.cpp's
// "gpt2" pre-tokenizer.
const std::string& gpt2_pattern();

// Qwen2's pattern (Qwen2.5, Qwen3, DeepSeek-R1-Distill-Qwen): Llama-3's with every \p{N} a piece
// of its own; their tokenizer.json's Split regex, llama.cpp's "qwen2" pre-tokenizer.
const std::string& qwen2_pattern();

// Rewrites \s and \S of a PCRE2 pattern into explicit Unicode White_Space classes (exposed for
// tests). Throws for \S inside a character class, which no class syntax can express.
std::string rewrite_whitespace_classes(const std::string& pattern, const std::string& source);

}  // namespace kvs::tokenizer
