// Byte-level BPE with tiktoken's semantics (Llama-3): a regex pre-tokenizer, rank-ordered merges
// over raw bytes, special tokens outside the merge vocabulary.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace kvs::tokenizer {

// What a byte-level BPE is made of, as the file readers (tiktoken_reader, hf_tokenizer_json)
// produce it.
struct BpeDefinition {
  std::string source;                // the file, for error messages
  std::string special_tokens_where;  // where the special tokens are defined ("file:line")
  std::vector<std::string> tokens;   // id -> bytes; the id is also the merge rank
  std::vector<std::pair<std::string, int32_t>> special_tokens;  // text -> id
  std::string pattern;                                          // the pre-tokenizer regex
};

// Checks the definition (all 256 single bytes are tokens, special ids collide with no other token,
// BOS <|begin_of_text|> and EOS <|end_of_text|>, <|eot_id|> exist) and builds the tokenizer.
// bos_id() is <|begin_of_text|>; eos_ids() are <|end_of_text|>, <|eom_id|> (when present) and
// <|eot_id|>, the stop tokens of Meta's Llama-3.1 tokenizer.
std::unique_ptr<Tokenizer> make_bpe_tokenizer(BpeDefinition definition);

}  // namespace kvs::tokenizer
