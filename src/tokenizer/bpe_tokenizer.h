// Byte-level BPE: an optional NFC normalization, a regex pre-tokenizer, byte-pair merges over raw
// bytes (tiktoken's rank rule or a GPT-2/HF merge list), special tokens parsed out of the text on
// request.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace kvs::tokenizer {

// What a byte-level BPE is made of, as the file readers (tiktoken_reader, hf_tokenizer_json,
// gguf_tokenizer) produce it.
struct BpeDefinition {
  std::string source;                // the file, for error messages
  std::string special_tokens_where;  // where the special tokens are defined ("file:line")
  std::vector<std::string> tokens;   // id -> bytes
  std::vector<std::pair<std::string, int32_t>> special_tokens;  // text -> id
  // Added tokens that are not special (Qwen's <think>, </think>, <tool_call>): parsed out of the
  // text as special tokens are, but decoded as text even where special tokens are skipped.
  std::vector<int32_t> plain_added_tokens;
  // Text is put in Unicode NFC before it is split (HF's NFC normalizer: Qwen).
  bool nfc = false;
  // The pre-tokenizer: regexes applied in turn, each splitting the pieces of the one before.
  std::vector<std::string> patterns;
  // A GPT-2/HF merge list: (left id, right id) by rank. Empty: tiktoken's rule, where an id is
  // its token's rank.
  std::vector<std::pair<int32_t, int32_t>> merges;
  // With a merge list: a piece that is a token stays whole (HF's ignore_merges).
  bool ignore_merges = true;
  // The special roles: BOS, whether prompts start with it, and the ids that end generation.
  int32_t bos = -1;
  bool adds_bos = true;
  std::vector<int32_t> eos;
};

// Llama-3's roles, from its special token names: BOS <|begin_of_text|>; EOS <|end_of_text|>,
// <|eom_id|> (when present) and <|eot_id|>, the stop tokens of Meta's Llama-3.1 tokenizer.
// Throws naming special_tokens_where when one is missing.
void set_llama3_roles(BpeDefinition& definition);

// Checks the definition (all 256 single bytes are tokens under tiktoken's rule, special ids collide
// with no other token, BOS and EOS are ids of the vocabulary) and builds the tokenizer.
std::unique_ptr<Tokenizer> make_bpe_tokenizer(BpeDefinition definition);

}  // namespace kvs::tokenizer
